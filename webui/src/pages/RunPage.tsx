// One run: its status, live curves (every tag that arrives, grouped by scale) and its spectated games, each
// board showing the search's visits and Q for the decision being made.

import { useEffect, useState } from "react";
import { Board, actionName, sideName } from "../components/Board";
import { LineChart, formatNumber } from "../components/LineChart";
import { Curves, addPoints, groupCharts } from "../curves";
import { useClient, useFrames, useNow } from "../hooks";
import { MoveEvent, RunStatus } from "../protocol";
import { ago } from "./RunList";

/** Spectated games shown at once: the most recently updated. */
export const MAX_GAMES = 4;

export function SpectatorBoard({ event }: { event: MoveEvent }) {
  // The event is the position searched, before its action: a finished game's last event still shows the search.
  let caption = `${sideName(event.game, event.to_play)} to move, chose ${actionName(event.game, event.cols, event.rows, event.action)}`;
  if (event.done) caption += event.winner === -1 ? ": a draw" : `: ${sideName(event.game, event.winner)} wins`;
  return (
    <figure className="spectator" data-testid="spectator" data-game-id={event.game_id} data-ply={event.ply} data-done={event.done}>
      <Board game={event.game} rows={event.rows} cols={event.cols} cells={event.cells} overlay={event} chosen={event.action} />
      <figcaption>
        <span>game {event.game_id} · ply {event.ply}</span>
        <span>{caption}</span>
        <span>root value {event.root_value >= 0 ? "+" : ""}{event.root_value.toFixed(2)}</span>
      </figcaption>
    </figure>
  );
}

function StatusPanel({ status }: { status: RunStatus }) {
  const now = useNow();
  const rows: [string, string][] = [
    ["algorithm", status.algorithm ?? "-"],
    ["game", status.game ?? "-"],
    ["env steps", status.env_steps !== undefined ? String(status.env_steps) : "-"],
    ["learner steps", status.train_iter !== undefined ? String(status.train_iter) : "-"],
    ["env steps/s", status.env_steps_per_s !== undefined ? formatNumber(status.env_steps_per_s) : "-"],
    ["buffer", status.buffer_size !== undefined ? String(status.buffer_size) : "-"],
    ["weights version", status.weights_version !== undefined ? String(status.weights_version) : "-"],
    ["actors alive", status.actors_alive !== undefined ? String(status.actors_alive) : "-"],
    ["policy lag", status.policy_lag !== undefined ? formatNumber(status.policy_lag) : "-"],
    ["updated", ago(now, status.updated_at)],
  ];
  for (const [bot, rate] of Object.entries(status.win_rates ?? {})) rows.push([`win rate vs ${bot}`, formatNumber(rate)]);
  for (const [tag, v] of Object.entries(status.losses ?? {})) rows.push([tag, formatNumber(v)]);
  return (
    <dl className="kv status" data-testid="status">
      {rows.map(([k, v]) => (
        <div key={k} className="kv-row">
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function Charts({ curves }: { curves: Curves }) {
  const { main, other } = groupCharts(curves);
  const series = (tags: string[]) => tags.map((tag) => ({ tag, points: curves.get(tag) ?? [] }));
  return (
    <>
      <div className="charts">
        {main.map(([name, tags]) => <LineChart key={name} title={name} series={series(tags)} />)}
      </div>
      {other.length > 0 && (
        <details className="more-charts">
          <summary>More curves ({other.length})</summary>
          <div className="charts small-charts">
            {other.map((tag) => <LineChart key={tag} title={tag} series={series([tag])} />)}
          </div>
        </details>
      )}
    </>
  );
}

export function RunPage({ run }: { run: string }) {
  const client = useClient();
  const [status, setStatus] = useState<RunStatus | null>(null);
  const [curves, setCurves] = useState<Curves>(new Map());
  const [games, setGames] = useState<ReadonlyMap<string, MoveEvent>>(new Map());

  useEffect(() => {
    setStatus(null);
    setCurves(new Map());
    setGames(new Map());
    return client.subscribe(run);
  }, [client, run]);
  useFrames("status", (f) => {
    if (f.run === run) setStatus(f.status);
  });
  useFrames("curve", (f) => {
    if (f.run === run) setCurves((c) => addPoints(c, f.points));
  });
  useFrames("move", (f) => {
    if (f.run !== run) return;
    setGames((g) => {
      const next = new Map(g);
      next.delete(f.event.game_id); // re-inserted last: Map order is update order
      next.set(f.event.game_id, f.event);
      while (next.size > MAX_GAMES) next.delete(next.keys().next().value as string);
      return next;
    });
  });

  const shown = [...games.values()].sort((a, b) => a.game_id.localeCompare(b.game_id));
  return (
    <div className="run-page">
      <div className="title-row">
        <h2>{run}</h2>
        <a className="button" href={`#/play/${encodeURIComponent(run)}`}>Play this agent</a>
      </div>
      <section>
        <h3>Status</h3>
        {status ? <StatusPanel status={status} /> : <p className="muted">waiting for the run's status...</p>}
      </section>
      <section>
        <h3>Live games</h3>
        {shown.length === 0 ? (
          <p className="muted">no spectated game yet (the first games of each collect are shown)</p>
        ) : (
          <>
            <p className="muted small">Shade and big number: the search's visits; small number: Q for the player to move; outline: the move chosen.</p>
            <div className="spectators">
              {shown.map((e) => <SpectatorBoard key={e.game_id} event={e} />)}
            </div>
          </>
        )}
      </section>
      <section>
        <h3>Curves</h3>
        {curves.size === 0 ? <p className="muted">no curve points yet</p> : <Charts curves={curves} />}
      </section>
    </div>
  );
}
