// React glue over BridgeClient: the client comes from context; hooks add and remove listeners with the view.

import { createContext, useContext, useEffect, useRef, useState } from "react";
import { BridgeClient, ConnectionState } from "./client";
import { FrameType, ServerFrame } from "./protocol";

export const ClientContext = createContext<BridgeClient | null>(null);

export function useClient(): BridgeClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error("useClient needs a ClientContext.Provider above it");
  return client;
}

/** Calls the latest `fn` with every frame of `type` while the component is mounted. */
export function useFrames<T extends FrameType>(type: T, fn: (frame: Extract<ServerFrame, { type: T }>) => void): void {
  const client = useClient();
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => client.on(type, (frame) => latest.current(frame)), [client, type]);
}

/** The connection state, re-rendered on each change. */
export function useConnection(): ConnectionState {
  const client = useClient();
  const [state, setState] = useState<ConnectionState>(client.state);
  useEffect(() => {
    setState(client.state);
    return client.onState(setState);
  }, [client]);
  return state;
}

/** Calls `fn` now and after every reconnect (e.g. to ask for the run list again). */
export function useOnOpen(fn: () => void): void {
  const client = useClient();
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    latest.current();
    return client.onState((s) => {
      if (s === "open") latest.current();
    });
  }, [client]);
}

/** Unix seconds, re-rendered every `periodMs`. */
export function useNow(periodMs = 1000): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now() / 1000), periodMs);
    return () => clearInterval(id);
  }, [periodMs]);
  return now;
}
