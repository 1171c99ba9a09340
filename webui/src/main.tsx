import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { BridgeClient, defaultUrl } from "./client";
import { ClientContext } from "./hooks";
import "./styles.css";

const client = new BridgeClient(defaultUrl());
client.connect();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <ClientContext.Provider value={client}>
      <App />
    </ClientContext.Provider>
  </StrictMode>,
);
