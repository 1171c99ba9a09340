import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultUrl } from "./client";
import { ServerFrame } from "./protocol";
import { fakeClient, tictactoeEvent } from "./test/fakes";

afterEach(() => vi.useRealTimers());

describe("BridgeClient", () => {
  it("hands runs, status, curve, move, play and error frames to the listeners of their type", () => {
    const { client, last } = fakeClient();
    client.connect();
    last().open();
    const got: ServerFrame[] = [];
    for (const type of ["runs", "status", "curve", "move", "play", "error"] as const) client.on(type, (f) => got.push(f));
    const frames: ServerFrame[] = [
      { type: "runs", runs: [{ run: "r-1", game: "tictactoe" }] },
      { type: "status", run: "r-1", status: { run: "r-1", env_steps: 100 } },
      { type: "curve", run: "r-1", points: [{ tag: "learn/total_loss", step: 100, value: 2.5, t: 10 }] },
      { type: "move", run: "r-1", event: tictactoeEvent() },
      {
        type: "play", game: "p", game_name: "tictactoe", rows: 3, cols: 3, cells: Array(9).fill(-1), to_play: 0,
        legal: [0, 1, 2, 3, 4, 5, 6, 7, 8], agent_side: 1, last_move: null, analysis: null, done: false, winner: -1,
      },
      { type: "error", message: "unknown op 'x'", op: "x" },
    ];
    for (const f of frames) last().receive(f);
    expect(got).toEqual(frames);
  });

  it("turns a frame it cannot parse into an error frame and keeps the connection", () => {
    const { client, last } = fakeClient();
    client.connect();
    last().open();
    const errors: string[] = [];
    client.on("error", (f) => errors.push(f.message));
    last().receive("{oops");
    last().receive({ type: "move", run: "r", event: { game_id: "g" } });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain("not JSON");
    expect(errors[1]).toContain("move:");
    expect(last().closed).toBe(false);
    expect(client.state).toBe("open");
  });

  it("sends frames only while open", () => {
    const { client, last } = fakeClient();
    client.connect();
    expect(client.send({ op: "runs" })).toBe(false);
    last().open();
    expect(client.send({ op: "runs" })).toBe(true);
    expect(last().sent).toEqual([{ op: "runs" }]);
  });

  it("reconnects with doubling delays up to the cap and re-subscribes", () => {
    vi.useFakeTimers();
    const { client, sockets, last } = fakeClient({ initialDelayMs: 100, maxDelayMs: 300 });
    const states: string[] = [];
    client.onState((s) => states.push(s));
    client.connect();
    client.subscribe("r-1");
    last().open();
    expect(last().sent).toEqual([{ op: "subscribe", run: "r-1" }]);

    last().drop();
    expect(client.retryInMs).toBe(100);
    vi.advanceTimersByTime(99);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);
    last().drop(); // refused: next wait doubles
    expect(client.retryInMs).toBe(200);
    vi.advanceTimersByTime(200);
    last().drop();
    expect(client.retryInMs).toBe(300); // capped
    vi.advanceTimersByTime(300);
    expect(sockets).toHaveLength(4);
    last().open();
    expect(last().sent).toEqual([{ op: "subscribe", run: "r-1" }]);
    expect(client.retryInMs).toBeNull();
    last().drop(); // after a good connection the wait starts over
    expect(client.retryInMs).toBe(100);
    expect(states).toContain("open");
    client.close();
    vi.advanceTimersByTime(1000);
    expect(sockets).toHaveLength(4);
  });

  it("counts subscriptions: unsubscribes when the last view lets go", () => {
    const { client, last } = fakeClient();
    client.connect();
    last().open();
    const a = client.subscribe("r-1");
    const b = client.subscribe("r-1");
    a();
    a();
    expect(last().sent).toEqual([{ op: "subscribe", run: "r-1" }]);
    b();
    expect(last().sent).toEqual([{ op: "subscribe", run: "r-1" }, { op: "unsubscribe", run: "r-1" }]);
  });

  it("derives the socket URL from the page's address", () => {
    expect(defaultUrl({ protocol: "http:", host: "127.0.0.1:8000" })).toBe("ws://127.0.0.1:8000/ws");
    expect(defaultUrl({ protocol: "https:", host: "example.org" })).toBe("wss://example.org/ws");
  });
});
