// The shell: header with the connection state, the bridge's error frames, and the page the URL's hash
// names (#/ the run list, #/run/<id> a run, #/play/<id> a game against its agent).

import { useEffect, useState } from "react";
import { useConnection, useClient, useFrames } from "./hooks";
import { PlayPage } from "./pages/PlayPage";
import { RunList } from "./pages/RunList";
import { RunPage } from "./pages/RunPage";

export type Route = { page: "runs" } | { page: "run"; run: string } | { page: "play"; run: string };

export function parseRoute(hash: string): Route {
  const m = /^#\/(run|play)\/(.+)$/.exec(hash);
  if (!m) return { page: "runs" };
  let run: string;
  try {
    run = decodeURIComponent(m[2]);
  } catch {
    return { page: "runs" };
  }
  return { page: m[1] as "run" | "play", run };
}

/** Errors kept on screen at once. */
const MAX_ERRORS = 3;

function Errors() {
  const [errors, setErrors] = useState<{ id: number; text: string }[]>([]);
  useFrames("error", (f) => {
    // The play page shows its own.
    if (f.op === "play_new" || f.op === "play_move") return;
    const text = f.op ? `${f.op}: ${f.message}` : f.message;
    setErrors((e) => [...e, { id: Date.now() + Math.random(), text }].slice(-MAX_ERRORS));
  });
  if (errors.length === 0) return null;
  return (
    <div className="errors" role="alert" data-testid="errors">
      {errors.map((e) => (
        <p key={e.id} className="error">
          {e.text}
          <button type="button" aria-label="dismiss" onClick={() => setErrors((all) => all.filter((x) => x.id !== e.id))}>
            ×
          </button>
        </p>
      ))}
    </div>
  );
}

function Connection() {
  const client = useClient();
  const state = useConnection();
  const text = state === "open" ? "connected" : state === "connecting" ? "connecting..." : `reconnecting${client.retryInMs !== null ? ` in ${(client.retryInMs / 1000).toFixed(1)} s` : ""}`;
  return (
    <span className={`conn ${state}`} data-testid="connection" data-state={state}>
      {text}
    </span>
  );
}

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return (
    <>
      <header>
        <a href="#/" className="brand">lzlite</a>
        <nav>
          <a href="#/">Runs</a>
        </nav>
        <Connection />
      </header>
      <main>
        <Errors />
        {route.page === "runs" && <RunList />}
        {route.page === "run" && <RunPage key={route.run} run={route.run} />}
        {route.page === "play" && <PlayPage key={route.run} run={route.run} />}
      </main>
    </>
  );
}
