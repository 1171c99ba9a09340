// Test helpers: a fake socket the real BridgeClient drives, and a render with the client in context.

import { render } from "@testing-library/react";
import { act, ReactElement } from "react";
import { BridgeClient, SocketLike } from "../client";
import { ClientContext } from "../hooks";
import { MoveEvent } from "../protocol";

export class FakeSocket implements SocketLike {
  readyState = 0;
  sent: unknown[] = [];
  closed = false;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.closed = true;
    this.readyState = 3;
  }
  /** The bridge accepts the connection. */
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  /** The bridge sends a frame (an object is sent as JSON, a string as is). */
  receive(frame: object | string): void {
    const data = typeof frame === "string" ? frame : JSON.stringify(frame);
    act(() => this.onmessage?.({ data }));
  }
  /** The connection drops. */
  drop(): void {
    this.readyState = 3;
    this.onclose?.({});
  }
}

/** A BridgeClient over fake sockets; `sockets` holds each one it opened, in order. */
export function fakeClient(options: { initialDelayMs?: number; maxDelayMs?: number } = {}) {
  const sockets: FakeSocket[] = [];
  const client = new BridgeClient("ws://test/ws", {
    ...options,
    makeSocket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  });
  return { client, sockets, last: () => sockets[sockets.length - 1] };
}

/** Renders `ui` with a connected fake client; returns the client and its open socket. */
export function renderWithClient(ui: ReactElement) {
  const fake = fakeClient();
  fake.client.connect();
  act(() => fake.last().open());
  const view = render(<ClientContext.Provider value={fake.client}>{ui}</ClientContext.Provider>);
  return { ...view, ...fake, socket: fake.last() };
}

/** A tic-tac-toe decision: X at a3 (action 0), O at b2 (4); X to move chose c1 (8). */
export function tictactoeEvent(overrides: Partial<MoveEvent> = {}): MoveEvent {
  return {
    game_id: "g1",
    game: "tictactoe",
    ply: 2,
    rows: 3,
    cols: 3,
    cells: [0, -1, -1, -1, 1, -1, -1, -1, -1],
    to_play: 0,
    action: 8,
    legal: [1, 2, 3, 5, 6, 7, 8],
    visits: [3, 10, 2, 4, 5, 1, 25],
    q: [-0.5, 0.1, -0.25, 0.0, 0.2, -0.75, 0.6],
    prior: [0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.3],
    root_value: 0.45,
    done: false,
    winner: -1,
    ...overrides,
  };
}
