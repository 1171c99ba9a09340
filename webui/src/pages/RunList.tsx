// The run list: every run the bridge knows (lzlite:runs), asked for on open and every few seconds.

import { useEffect, useState } from "react";
import { formatNumber } from "../components/LineChart";
import { useClient, useFrames, useNow, useOnOpen } from "../hooks";
import { RunStatus } from "../protocol";

/** Seconds after its last update that a run counts as live (the status key's TTL is 60 s). */
export const LIVE_FOR_S = 60;
const REFRESH_MS = 3000;

export function ago(now: number, t: number | undefined): string {
  if (t === undefined) return "never";
  const s = Math.max(0, Math.round(now - t));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

export function RunList() {
  const client = useClient();
  const now = useNow();
  const [runs, setRuns] = useState<RunStatus[] | null>(null);
  useFrames("runs", (f) => setRuns(f.runs));
  useOnOpen(() => client.send({ op: "runs" }));
  useEffect(() => {
    const id = setInterval(() => client.send({ op: "runs" }), REFRESH_MS);
    return () => clearInterval(id);
  }, [client]);

  if (runs === null) return <p className="muted">asking the bridge for runs...</p>;
  if (runs.length === 0) {
    return (
      <p className="muted">
        No runs yet. Start one with <code>--redis URL</code> (or <code>logger.redis_url</code>) pointing at this bridge's Redis.
      </p>
    );
  }
  const sorted = [...runs].sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0));
  return (
    <ul className="runs" data-testid="run-list">
      {sorted.map((r) => {
        const live = r.updated_at !== undefined && now - r.updated_at < LIVE_FOR_S;
        const id = encodeURIComponent(r.run);
        return (
          <li key={r.run} className="run-card" data-run={r.run}>
            <div className="run-head">
              <span className={`dot ${live ? "live" : "stale"}`} title={live ? "live" : "no update for a minute"} />
              <a href={`#/run/${id}`} className="run-name">{r.run}</a>
            </div>
            <div className="run-meta">
              {[r.algorithm, r.game, r.role].filter(Boolean).join(" · ")}
            </div>
            <dl className="kv">
              <dt>env steps</dt><dd>{r.env_steps ?? "-"}</dd>
              <dt>learner steps</dt><dd>{r.train_iter ?? "-"}</dd>
              <dt>env steps/s</dt><dd>{r.env_steps_per_s !== undefined ? formatNumber(r.env_steps_per_s) : "-"}</dd>
              <dt>updated</dt><dd>{ago(now, r.updated_at)}</dd>
            </dl>
            <div className="actions">
              <a href={`#/run/${id}`}>Watch</a>
              <a href={`#/play/${id}`}>Play</a>
            </div>
          </li>
        );
      })}
    </ul>
  );
}
