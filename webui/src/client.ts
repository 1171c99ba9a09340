// The one place that speaks to the bridge: opens the WebSocket, reconnects with exponential backoff,
// re-sends the subscriptions after a reconnect, parses frames (protocol.ts) and hands each to the listeners
// of its type. A frame the UI cannot parse becomes an error frame, so the page shows it like the bridge's own.

import { ClientFrame, FrameError, FrameType, ServerFrame, parseFrame } from "./protocol";

export type ConnectionState = "connecting" | "open" | "closed";

type FrameOf<T extends FrameType> = Extract<ServerFrame, { type: T }>;
type Listener<T extends FrameType> = (frame: FrameOf<T>) => void;

/** The part of the browser's WebSocket the client uses (tests pass a fake). */
export interface SocketLike {
  readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  send(data: string): void;
  close(): void;
}

export interface ClientOptions {
  /** Makes a socket for a URL; default `new WebSocket(url)`. */
  makeSocket?: (url: string) => SocketLike;
  /** First reconnect delay in ms; doubled after each failed try. */
  initialDelayMs?: number;
  /** Longest reconnect delay in ms. */
  maxDelayMs?: number;
}

const OPEN = 1;

/** The bridge's WebSocket URL for a page served by the bridge (same host, path /ws). */
export function defaultUrl(loc: { protocol: string; host: string } = window.location): string {
  return `${loc.protocol === "https:" ? "wss" : "ws"}://${loc.host}/ws`;
}

export class BridgeClient {
  readonly url: string;
  state: ConnectionState = "closed";
  /** Milliseconds until the next reconnect try while closed, else null. */
  retryInMs: number | null = null;

  private socket: SocketLike | null = null;
  private readonly makeSocket: (url: string) => SocketLike;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;
  private readonly listeners = new Map<FrameType, Set<(frame: ServerFrame) => void>>();
  private readonly stateListeners = new Set<(state: ConnectionState) => void>();
  // Runs subscribed to, with how many views hold each; re-sent after every reconnect.
  private readonly subscriptions = new Map<string, number>();

  constructor(url: string, options: ClientOptions = {}) {
    this.url = url;
    this.makeSocket = options.makeSocket ?? ((u) => new WebSocket(u) as unknown as SocketLike);
    this.initialDelayMs = options.initialDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 10_000;
  }

  /** Starts connecting (and reconnecting after every drop) until `close()`. */
  connect(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  /** Closes the socket and stops reconnecting. */
  close(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.retryInMs = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = s.onmessage = s.onerror = s.onopen = null;
      s.close();
    }
    this.setState("closed");
  }

  /** Calls `fn` with every frame of `type`; returns the function that removes it. */
  on<T extends FrameType>(type: T, fn: Listener<T>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    const wrapped = fn as (frame: ServerFrame) => void;
    set.add(wrapped);
    return () => set!.delete(wrapped);
  }

  /** Calls `fn` with each change of the connection state; returns the function that removes it. */
  onState(fn: (state: ConnectionState) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  /** Sends a frame now; false (nothing sent) while the socket is not open. */
  send(frame: ClientFrame): boolean {
    if (!this.socket || this.socket.readyState !== OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  /** Holds a subscription to `run` (status, curve, live games) across reconnects; returns the release. */
  subscribe(run: string): () => void {
    const held = this.subscriptions.get(run) ?? 0;
    this.subscriptions.set(run, held + 1);
    if (held === 0) this.send({ op: "subscribe", run });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.subscriptions.get(run) ?? 1) - 1;
      if (n > 0) {
        this.subscriptions.set(run, n);
      } else {
        this.subscriptions.delete(run);
        this.send({ op: "unsubscribe", run });
      }
    };
  }

  private open(): void {
    this.setState("connecting");
    let s: SocketLike;
    try {
      s = this.makeSocket(this.url);
    } catch (e) {
      this.emitError(`cannot open ${this.url}: ${String(e)}`);
      this.scheduleReconnect();
      return;
    }
    this.socket = s;
    s.onopen = () => {
      this.failures = 0;
      this.retryInMs = null;
      this.setState("open");
      for (const run of this.subscriptions.keys()) this.send({ op: "subscribe", run });
    };
    s.onmessage = (ev) => this.dispatchText(typeof ev.data === "string" ? ev.data : String(ev.data));
    s.onerror = () => {
      // The close event follows and schedules the reconnect.
    };
    s.onclose = () => {
      if (this.socket !== s) return;
      this.socket = null;
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** this.failures);
    this.failures += 1;
    this.retryInMs = delay;
    this.setState("closed");
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.open();
    }, delay);
  }

  /** Parses and dispatches one text frame (public for tests). */
  dispatchText(text: string): void {
    let frame: ServerFrame;
    try {
      frame = parseFrame(text);
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      this.emitError(e.message);
      return;
    }
    this.dispatch(frame);
  }

  private emitError(message: string): void {
    this.dispatch({ type: "error", message, op: null });
  }

  private dispatch(frame: ServerFrame): void {
    for (const fn of this.listeners.get(frame.type) ?? []) fn(frame);
  }

  private setState(state: ConnectionState): void {
    if (state === this.state && state !== "closed") return;
    this.state = state;
    for (const fn of this.stateListeners) fn(state);
  }
}
