import { describe, expect, it } from "vitest";
import { FrameError, parseFrame } from "./protocol";
import { tictactoeEvent } from "./test/fakes";

describe("parseFrame", () => {
  it("accepts every frame type of the API", () => {
    const frames = [
      { type: "runs", runs: [{ run: "a-1" }] },
      { type: "status", run: "a-1", status: { run: "a-1", env_steps: 5 } },
      { type: "curve", run: "a-1", points: [{ tag: "learn/total_loss", step: 10, value: 1.5, t: 1 }] },
      { type: "move", run: "a-1", event: tictactoeEvent() },
      {
        type: "play", game: "p1", game_name: "tictactoe", rows: 3, cols: 3, cells: Array(9).fill(-1), to_play: 0,
        legal: [0, 1, 2, 3, 4, 5, 6, 7, 8], agent_side: 1, last_move: null, analysis: null, done: false, winner: -1,
      },
      { type: "error", message: "bad op", op: "frobnicate" },
    ];
    for (const f of frames) expect(parseFrame(JSON.stringify(f))).toEqual(f);
  });

  it.each([
    ["not json", "bridge sent a frame that is not JSON"],
    ["[1, 2]", "not a JSON object"],
    [JSON.stringify({ type: "nope" }), 'unknown type "nope"'],
    [JSON.stringify({ type: "move", run: "r", event: tictactoeEvent({ visits: [1] }) }), "visits must hold one number per legal action"],
    [JSON.stringify({ type: "move", run: "r", event: tictactoeEvent({ cells: [0, 1] }) }), "cells must hold rows * cols numbers"],
    [JSON.stringify({ type: "curve", run: "r", points: [{ tag: "x" }] }), "each point needs tag, step and value"],
    [JSON.stringify({ type: "error" }), "message must be a string"],
  ])("refuses %s with a message naming the problem", (text, message) => {
    expect(() => parseFrame(text)).toThrow(FrameError);
    expect(() => parseFrame(text)).toThrow(message);
  });
});
