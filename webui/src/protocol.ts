// The bridge's WebSocket API (docs/architecture.md, "WebSocket API"): the frames both sides send, and the
// checks that turn a text frame from the bridge into a typed one. Nothing else in the UI parses frames.

/** One decision of a spectated self-play game (lzlite.telemetry.MoveEvent). */
export interface MoveEvent {
  game_id: string;
  game: string;
  ply: number;
  rows: number;
  cols: number;
  /** [rows * cols], row-major, top row first: -1 empty, 0 / 1 a stone of player 0 / 1. */
  cells: number[];
  to_play: number;
  /** The move chosen at this decision. */
  action: number;
  /** The legal actions; visits, q and prior hold one number per legal action, in this order. */
  legal: number[];
  visits: number[];
  /** From the view of the player to move. */
  q: number[];
  prior: number[];
  root_value: number;
  done: boolean;
  /** 0 or 1 once someone has won, else -1. */
  winner: number;
}

/** A run's status (`lzlite:run:<run>:status`); every field but `run` may be missing on an older writer. */
export interface RunStatus {
  run: string;
  exp_name?: string;
  algorithm?: string;
  game?: string;
  role?: string;
  env_steps?: number;
  train_iter?: number;
  losses?: Record<string, number>;
  win_rates?: Record<string, number>;
  env_steps_per_s?: number;
  buffer_size?: number;
  weights_version?: number;
  actors_alive?: number;
  policy_lag?: number;
  /** Unix seconds. */
  updated_at?: number;
}

/** One logged scalar: `step` is in env steps, `t` in unix seconds. */
export interface CurvePoint {
  tag: string;
  step: number;
  value: number;
  t: number;
}

/** The agent's search at its last decision, one number per legal action. */
export interface Analysis {
  legal: number[];
  visits: number[];
  q: number[];
  prior: number[];
  root_value: number;
}

/** A game against the agent, as the bridge holds it after each move. */
export interface PlayState {
  game: string;
  game_name: string;
  rows: number;
  cols: number;
  cells: number[];
  to_play: number;
  legal: number[];
  agent_side: number;
  last_move: number | null;
  analysis: Analysis | null;
  done: boolean;
  winner: number;
}

export type ServerFrame =
  | { type: "runs"; runs: RunStatus[] }
  | { type: "status"; run: string; status: RunStatus }
  | { type: "curve"; run: string; points: CurvePoint[] }
  | { type: "move"; run: string; event: MoveEvent }
  | ({ type: "play" } & PlayState)
  | { type: "error"; message: string; op: string | null };

export type ClientFrame =
  | { op: "runs" }
  | { op: "subscribe"; run: string }
  | { op: "unsubscribe"; run: string }
  | { op: "play_new"; run: string; agent_side: 0 | 1 }
  | { op: "play_move"; game: string; action: number };

export type FrameType = ServerFrame["type"];

/** Thrown by `parseFrame` for a frame the UI cannot use; the message says what was wrong. */
export class FrameError extends Error {}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isNumArray = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");

function need(ok: boolean, what: string): void {
  if (!ok) throw new FrameError(what);
}

function checkBoard(o: Obj, where: string, extra: string[]): void {
  need(isNum(o.rows) && isNum(o.cols) && (o.rows as number) > 0 && (o.cols as number) > 0, `${where}: rows and cols must be positive numbers`);
  need(isNumArray(o.cells) && o.cells.length === (o.rows as number) * (o.cols as number), `${where}: cells must hold rows * cols numbers`);
  for (const key of extra) need(isNumArray(o[key]), `${where}: ${key} must be a list of numbers`);
}

function checkPerLegal(o: Obj, where: string): void {
  const n = (o.legal as number[]).length;
  for (const key of ["visits", "q", "prior"]) {
    need(isNumArray(o[key]) && (o[key] as number[]).length === n, `${where}: ${key} must hold one number per legal action`);
  }
}

/** Checks a MoveEvent's fields and lengths (throws FrameError). */
export function checkMoveEvent(v: unknown): MoveEvent {
  need(isObj(v), "move: event must be an object");
  const e = v as Obj;
  need(typeof e.game_id === "string" && typeof e.game === "string", "move: game_id and game must be strings");
  need(isNum(e.ply) && isNum(e.to_play) && isNum(e.action), "move: ply, to_play and action must be numbers");
  checkBoard(e, "move", ["legal"]);
  checkPerLegal(e, "move");
  return v as MoveEvent;
}

/**
 * Parses one text frame from the bridge.
 *
 * Throws FrameError naming the problem when the text is not JSON, has an unknown `type`, or lacks a field
 * the UI reads; a frame that passes can be used without further checks.
 */
export function parseFrame(text: string): ServerFrame {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new FrameError(`bridge sent a frame that is not JSON: ${text.slice(0, 80)}`);
  }
  need(isObj(v), "bridge sent a frame that is not a JSON object");
  const f = v as Obj;
  switch (f.type) {
    case "runs":
      need(Array.isArray(f.runs) && f.runs.every((r) => isObj(r) && typeof r.run === "string"), "runs: runs must be a list of statuses with a run id");
      break;
    case "status":
      need(typeof f.run === "string" && isObj(f.status), "status: needs run and status");
      break;
    case "curve":
      need(typeof f.run === "string" && Array.isArray(f.points), "curve: needs run and points");
      for (const p of f.points as unknown[]) {
        need(isObj(p) && typeof p.tag === "string" && isNum(p.step) && typeof p.value === "number", "curve: each point needs tag, step and value");
      }
      break;
    case "move":
      need(typeof f.run === "string", "move: needs run");
      checkMoveEvent(f.event);
      break;
    case "play":
      need(typeof f.game === "string" && typeof f.game_name === "string", "play: game and game_name must be strings");
      need(isNum(f.to_play) && isNum(f.agent_side) && typeof f.done === "boolean" && isNum(f.winner), "play: to_play, agent_side, done and winner are required");
      checkBoard(f, "play", ["legal"]);
      if (f.analysis !== null && f.analysis !== undefined) {
        need(isObj(f.analysis) && isNumArray(f.analysis.legal), "play: analysis.legal must be a list of numbers");
        checkPerLegal(f.analysis as Obj, "play: analysis");
      }
      break;
    case "error":
      need(typeof f.message === "string", "error: message must be a string");
      break;
    default:
      throw new FrameError(`bridge sent a frame of unknown type ${JSON.stringify(f.type)}`);
  }
  return v as ServerFrame;
}
