import { cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PlayPage } from "./PlayPage";
import { renderWithClient } from "../test/fakes";

afterEach(cleanup);

const playFrame = (over: object = {}) => ({
  type: "play", game: "p-7", game_name: "tictactoe", rows: 3, cols: 3, cells: Array(9).fill(-1), to_play: 0,
  legal: [0, 1, 2, 3, 4, 5, 6, 7, 8], agent_side: 1, last_move: null, analysis: null, done: false, winner: -1, ...over,
});

describe("PlayPage", () => {
  it("starts a game, sends play_move on a click and draws the agent's answer", () => {
    const { socket } = renderWithClient(<PlayPage run="ttt-1" />);
    fireEvent.click(screen.getByText("I move first"));
    expect(socket.sent).toEqual([{ op: "play_new", run: "ttt-1", agent_side: 1 }]);
    socket.receive(playFrame());
    expect(screen.getByTestId("play-line").textContent).toBe("Your move (X).");
    fireEvent.click(screen.getByTestId("cell-4"));
    expect(socket.sent[1]).toEqual({ op: "play_move", game: "p-7", action: 4 });
    expect(screen.getByTestId("play-line").textContent).toBe("The agent is thinking...");
    fireEvent.click(screen.getByTestId("cell-5")); // ignored while the agent thinks
    expect(socket.sent).toHaveLength(2);
    const cells = Array(9).fill(-1);
    cells[4] = 0;
    cells[0] = 1;
    socket.receive(playFrame({
      cells, to_play: 0, legal: [1, 2, 3, 5, 6, 7, 8], last_move: 0,
      analysis: { legal: [0, 1, 2, 3, 5, 6, 7, 8], visits: [30, 2, 5, 1, 1, 4, 1, 6], q: [0.0, -0.4, 0.0, -0.5, -0.5, 0.0, -0.5, 0.0], prior: [0.3, 0.1, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05], root_value: 0.0 },
    }));
    expect(screen.getByTestId("cell-0").textContent).toBe("O");
    expect(screen.getByTestId("cell-0").className).toContain("chosen");
    expect(screen.getByTestId("play-line").textContent).toBe("Your move (X).");
    expect(screen.getByTestId("analysis").querySelector("tbody tr")!.textContent).toBe("a3300.000.30");
  });

  it("shows the bridge's error frame for an illegal move, and the game goes on", () => {
    const { socket } = renderWithClient(<PlayPage run="ttt-1" />);
    fireEvent.click(screen.getByText("I move first"));
    socket.receive(playFrame());
    fireEvent.click(screen.getByTestId("cell-3"));
    socket.receive({ type: "error", message: "action 3 is not legal here (legal: 0 1 2)", op: "play_move" });
    expect(screen.getByTestId("play-error").textContent).toBe("action 3 is not legal here (legal: 0 1 2)");
    expect(screen.getByTestId("play-line").textContent).toBe("Your move (X).");
    fireEvent.click(screen.getByTestId("cell-2"));
    expect(socket.sent[socket.sent.length - 1]).toEqual({ op: "play_move", game: "p-7", action: 2 });
  });

  it("lets the agent move first and shows the end of the game", () => {
    const { socket } = renderWithClient(<PlayPage run="ttt-1" />);
    fireEvent.click(screen.getByText("The agent moves first"));
    expect(socket.sent).toEqual([{ op: "play_new", run: "ttt-1", agent_side: 0 }]);
    socket.receive(playFrame({ agent_side: 0, cells: [0, -1, -1, -1, -1, -1, -1, -1, -1], to_play: 1, last_move: 0 }));
    expect(screen.getByTestId("play-line").textContent).toBe("Your move (O).");
    socket.receive(playFrame({ agent_side: 0, cells: [0, 0, 0, 1, 1, -1, -1, -1, -1], to_play: 1, legal: [], last_move: 2, done: true, winner: 0 }));
    expect(screen.getByTestId("play-line").textContent).toBe("The agent wins.");
    expect(screen.getByTestId("cell-5").tagName).toBe("DIV"); // no more moves
    expect(screen.getByText("New game:")).toBeTruthy();
  });

  it("says so when the bridge is not connected", () => {
    const { socket } = renderWithClient(<PlayPage run="ttt-1" />);
    socket.drop();
    fireEvent.click(screen.getByText("I move first"));
    expect(screen.getByTestId("play-error").textContent).toContain("not connected");
  });
});
