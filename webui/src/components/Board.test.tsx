import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup } from "@testing-library/react";
import { Board, actionName } from "./Board";
import { SpectatorBoard } from "../pages/RunPage";
import { tictactoeEvent } from "../test/fakes";

afterEach(cleanup);

const cell = (i: number) => screen.getByTestId(`cell-${i}`);

describe("Board", () => {
  it("draws a tic-tac-toe MoveEvent: stones, and visits and Q on each legal cell", () => {
    const e = tictactoeEvent();
    render(<SpectatorBoard event={e} />);
    expect(screen.getAllByTestId(/^cell-/)).toHaveLength(9);
    expect(cell(0).textContent).toBe("X");
    expect(cell(4).textContent).toBe("O");
    // Every legal action carries its own visits and Q; occupied cells carry none.
    e.legal.forEach((a, i) => {
      const s = screen.getByTestId(`search-${a}`);
      expect(Number(s.dataset.visits)).toBe(e.visits[i]);
      expect(Number(s.dataset.q)).toBe(e.q[i]);
      expect(s.textContent).toContain(String(e.visits[i]));
    });
    expect(screen.queryByTestId("search-0")).toBeNull();
    expect(screen.getByTestId("search-8").textContent).toBe("25+0.60");
    expect(screen.getByTestId("search-8").className).toContain("chosen");
    expect(screen.getByTestId("search-1").className).not.toContain("chosen");
    // The most visited cell is the darkest.
    const alpha = (a: number) => Number(/rgba\(.*, ([\d.]+)\)/.exec(screen.getByTestId(`search-${a}`).style.backgroundImage)![1]);
    expect(alpha(8)).toBeGreaterThan(alpha(2));
    expect(screen.getByTestId("spectator").textContent).toContain("X to move, chose c1");
  });

  it("draws Connect Four as 6 rows x 7 columns with the search's numbers above the columns", () => {
    const cells = Array(42).fill(-1);
    cells[5 * 7 + 3] = 0; // bottom row, column 4
    cells[4 * 7 + 3] = 1;
    const legal = [0, 1, 2, 3, 4, 5, 6];
    render(
      <Board game="connect4" rows={6} cols={7} cells={cells} chosen={3}
        overlay={{ legal, visits: [1, 2, 3, 40, 5, 6, 7], q: [0, 0, 0, 0.5, 0, 0, -0.1] }} />,
    );
    expect(screen.getAllByTestId(/^cell-/)).toHaveLength(42);
    expect(cell(38).dataset.cell).toBe("0");
    expect(cell(31).dataset.cell).toBe("1");
    expect(cell(0).dataset.cell).toBe("-1");
    expect(screen.getAllByTestId(/^search-/)).toHaveLength(7);
    expect(screen.getByTestId("search-3").dataset.visits).toBe("40");
    expect(screen.getByTestId("search-3").className).toContain("chosen");
    expect(screen.getByTestId("search-6").textContent).toBe("7-0.10");
  });

  it("draws a 9x9 gomoku board with overlays only on the legal points", () => {
    const cells = Array(81).fill(-1);
    cells[40] = 0;
    render(<Board game="gomoku" rows={9} cols={9} cells={cells} overlay={{ legal: [30, 31], visits: [9, 1], q: [0.25, -0.5] }} chosen={30} />);
    expect(screen.getAllByTestId(/^cell-/)).toHaveLength(81);
    expect(screen.getAllByTestId(/^search-/)).toHaveLength(2);
    expect(screen.getByTestId("search-30").dataset.visits).toBe("9");
    expect(cell(40).querySelector(".stone.p0")).not.toBeNull();
  });

  it("clicks give cell actions for cell games and column actions for drop games", () => {
    const onAction = vi.fn();
    const { unmount } = render(<Board game="tictactoe" rows={3} cols={3} cells={[0, -1, -1, -1, -1, -1, -1, -1, -1]} onAction={onAction} />);
    fireEvent.click(cell(5));
    expect(onAction).toHaveBeenLastCalledWith(5);
    expect(cell(0).tagName).toBe("DIV"); // an occupied cell is no button
    unmount();
    render(<Board game="connect4" rows={6} cols={7} cells={Array(42).fill(-1)} onAction={onAction} />);
    fireEvent.click(cell(2 * 7 + 4));
    expect(onAction).toHaveBeenLastCalledWith(4);
  });

  it("names actions", () => {
    expect(actionName("tictactoe", 3, 3, 0)).toBe("a3");
    expect(actionName("tictactoe", 3, 3, 8)).toBe("c1");
    expect(actionName("connect4", 7, 6, 0)).toBe("column 1");
    expect(actionName("gomoku", 9, 9, 80)).toBe("i1");
  });

  it("shows the last decision of a finished game with its search and the result", () => {
    const cells = [0, 0, -1, 1, 1, -1, -1, -1, -1];
    render(<SpectatorBoard event={tictactoeEvent({ ply: 4, cells, action: 2, legal: [2, 5, 6, 7, 8], visits: [20, 1, 1, 1, 1], q: [1, -1, -1, -1, -1], prior: [0.2, 0.2, 0.2, 0.2, 0.2], done: true, winner: 0 })} />);
    expect(screen.getByTestId("spectator").textContent).toContain("X to move, chose c3: X wins");
    expect(screen.getByTestId("search-2").className).toContain("chosen");
    expect(screen.getByTestId("search-2").dataset.visits).toBe("20");
  });

  it("outlines a drop game's last move on the stone it left", () => {
    const cells = Array(42).fill(-1);
    cells[5 * 7 + 2] = 0;
    cells[4 * 7 + 2] = 1;
    render(<Board game="connect4" rows={6} cols={7} cells={cells} chosen={2} />);
    expect(cell(4 * 7 + 2).className).toContain("chosen");
    expect(cell(5 * 7 + 2).className).not.toContain("chosen");
  });
});
