// Play the run's current checkpoint: the bridge holds the game and runs the agent's search server-side;
// the page sends moves and draws what comes back. Illegal moves are the bridge's to refuse: its error frame
// is shown here, and the game goes on.

import { useState } from "react";
import { Board, actionName, sideName } from "../components/Board";
import { useClient, useFrames } from "../hooks";
import { PlayState } from "../protocol";

function outcome(p: PlayState): string {
  if (p.winner === -1) return "Draw.";
  return p.winner === p.agent_side ? "The agent wins." : "You win!";
}

function AgentAnalysis({ play }: { play: PlayState }) {
  const a = play.analysis;
  if (!a) return null;
  const order = a.legal.map((_, i) => i).sort((i, j) => a.visits[j] - a.visits[i] || a.prior[j] - a.prior[i]).slice(0, 5);
  return (
    <table className="analysis" data-testid="analysis">
      <caption>
        The agent's search before its last move (root value {a.root_value >= 0 ? "+" : ""}
        {a.root_value.toFixed(2)})
      </caption>
      <thead>
        <tr><th>move</th><th>visits</th><th>Q</th><th>prior</th></tr>
      </thead>
      <tbody>
        {order.map((i) => (
          <tr key={a.legal[i]}>
            <td>{actionName(play.game_name, play.cols, play.rows, a.legal[i])}</td>
            <td>{Math.round(a.visits[i])}</td>
            <td>{a.q[i].toFixed(2)}</td>
            <td>{a.prior[i].toFixed(2)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function PlayPage({ run }: { run: string }) {
  const client = useClient();
  const [play, setPlay] = useState<PlayState | null>(null);
  const [waiting, setWaiting] = useState<"new" | "move" | null>(null);
  const [error, setError] = useState<string | null>(null);

  useFrames("play", (f) => {
    // Ours: the answer to our play_new, or a later state of the game we hold.
    if (waiting === "new" || (play !== null && f.game === play.game)) {
      const { type: _type, ...state } = f;
      setPlay(state);
      setWaiting(null);
      setError(null);
    }
  });
  useFrames("error", (f) => {
    if (f.op === "play_new" || f.op === "play_move") {
      setError(f.message);
      setWaiting(null);
    }
  });

  const start = (agentSide: 0 | 1) => {
    setError(null);
    if (client.send({ op: "play_new", run, agent_side: agentSide })) setWaiting("new");
    else setError("not connected to the bridge; try again when it reconnects");
  };
  const move = (action: number) => {
    if (!play || play.done || waiting !== null || play.to_play === play.agent_side) return;
    setError(null);
    if (client.send({ op: "play_move", game: play.game, action })) setWaiting("move");
    else setError("not connected to the bridge; try again when it reconnects");
  };

  let line = "";
  if (waiting === "new") line = "starting a game...";
  else if (play?.done) line = outcome(play);
  else if (waiting === "move" || (play && play.to_play === play.agent_side)) line = "The agent is thinking...";
  else if (play) line = `Your move (${sideName(play.game_name, 1 - play.agent_side)}).`;

  return (
    <div className="play-page">
      <div className="title-row">
        <h2>Play {run}</h2>
        <a href={`#/run/${encodeURIComponent(run)}`}>Watch the run</a>
      </div>
      <div className="actions">
        <span className="muted">{play ? "New game:" : "Start a game:"}</span>
        <button type="button" onClick={() => start(1)} disabled={waiting !== null}>
          I move first
        </button>
        <button type="button" onClick={() => start(0)} disabled={waiting !== null}>
          The agent moves first
        </button>
      </div>
      {error && (
        <p className="error" role="alert" data-testid="play-error">
          {error}
        </p>
      )}
      {play && (
        <div className="play-board" data-testid="play" data-done={play.done} data-winner={play.winner} data-game={play.game}>
          <p className="play-line" data-testid="play-line">{line}</p>
          <Board
            game={play.game_name}
            rows={play.rows}
            cols={play.cols}
            cells={play.cells}
            chosen={play.last_move}
            onAction={play.done ? undefined : move}
          />
          <AgentAnalysis play={play} />
        </div>
      )}
      {!play && waiting === "new" && <p className="muted">{line}</p>}
    </div>
  );
}
