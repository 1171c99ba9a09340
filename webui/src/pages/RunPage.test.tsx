import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { RunPage } from "./RunPage";
import { renderWithClient, tictactoeEvent } from "../test/fakes";

afterEach(cleanup);

const points = (testId: string) => Number(screen.getByTestId(testId).dataset.points);

describe("RunPage", () => {
  it("subscribes to its run and lets go on leaving", () => {
    const { socket, unmount } = renderWithClient(<RunPage run="ttt-1" />);
    expect(socket.sent).toEqual([{ op: "subscribe", run: "ttt-1" }]);
    unmount();
    expect(socket.sent).toEqual([{ op: "subscribe", run: "ttt-1" }, { op: "unsubscribe", run: "ttt-1" }]);
  });

  it("curves gain points as curve frames arrive; other runs' frames are ignored", () => {
    const { socket } = renderWithClient(<RunPage run="ttt-1" />);
    expect(screen.getByText("no curve points yet")).toBeTruthy();
    socket.receive({ type: "curve", run: "ttt-1", points: [
      { tag: "learn/total_loss", step: 100, value: 2.0, t: 1 },
      { tag: "learn/value_loss", step: 100, value: 1.0, t: 1 },
      { tag: "eval/rule/win", step: 100, value: 0.2, t: 1 },
    ] });
    expect(points("chart-losses")).toBe(2);
    expect(points("chart-win-rates-vs-bots")).toBe(1);
    socket.receive({ type: "curve", run: "ttt-1", points: [{ tag: "learn/total_loss", step: 200, value: 1.5, t: 2 }] });
    socket.receive({ type: "curve", run: "other", points: [{ tag: "learn/total_loss", step: 300, value: 1.0, t: 3 }] });
    expect(points("chart-losses")).toBe(3);
    const line = screen.getByTestId("chart-losses").querySelector('polyline[data-tag="learn/total_loss"]')!;
    expect(line.getAttribute("points")!.split(" ")).toHaveLength(2);
    expect(screen.getByTestId("chart-losses").textContent).toContain("learn/total_loss: 1.500");
    socket.receive({ type: "curve", run: "ttt-1", points: [{ tag: "learn/lr", step: 200, value: 0.003, t: 2 }] });
    expect(screen.getByText("More curves (1)")).toBeTruthy();
    expect(points("chart-learn-lr")).toBe(1);
  });

  it("shows the status and each live game's latest decision", () => {
    const { socket } = renderWithClient(<RunPage run="ttt-1" />);
    socket.receive({ type: "status", run: "ttt-1", status: { run: "ttt-1", algorithm: "muzero", env_steps: 1234, win_rates: { rule: 0.5 } } });
    expect(screen.getByTestId("status").textContent).toContain("1234");
    expect(screen.getByTestId("status").textContent).toContain("win rate vs rule");
    socket.receive({ type: "move", run: "ttt-1", event: tictactoeEvent({ ply: 2 }) });
    socket.receive({ type: "move", run: "ttt-1", event: tictactoeEvent({ game_id: "g2", ply: 0, cells: Array(9).fill(-1), legal: [4], visits: [7], q: [0.1], prior: [1], action: 4 }) });
    expect(screen.getAllByTestId("spectator").map((s) => s.dataset.gameId)).toEqual(["g1", "g2"]);
    const next = tictactoeEvent({ ply: 4, cells: [0, -1, -1, -1, 1, -1, 1, -1, 0], legal: [2], visits: [9], q: [0.9], prior: [1], action: 2 });
    socket.receive({ type: "move", run: "ttt-1", event: next });
    const g1 = screen.getAllByTestId("spectator").find((s) => s.dataset.gameId === "g1")!;
    expect(g1.dataset.ply).toBe("4");
    expect(g1.querySelector('[data-testid="cell-6"]')!.textContent).toBe("O");
    expect(g1.querySelector('[data-testid="search-2"]')!.getAttribute("data-visits")).toBe("9");
  });
});
