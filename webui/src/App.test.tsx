import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { App, parseRoute } from "./App";
import { renderWithClient } from "./test/fakes";

afterEach(() => {
  cleanup();
  window.location.hash = "";
});

describe("App", () => {
  it("routes by the hash", () => {
    expect(parseRoute("")).toEqual({ page: "runs" });
    expect(parseRoute("#/run/ttt%2F1-17")).toEqual({ page: "run", run: "ttt/1-17" });
    expect(parseRoute("#/play/a-1")).toEqual({ page: "play", run: "a-1" });
    expect(parseRoute("#/run/%E0%A4%A")).toEqual({ page: "runs" });
  });

  it("lists the runs the bridge reports, each linking to its page and its game", () => {
    const { socket } = renderWithClient(<App />);
    expect(socket.sent).toContainEqual({ op: "runs" });
    const now = Date.now() / 1000;
    socket.receive({ type: "runs", runs: [
      { run: "old-1", game: "connect4", algorithm: "alphazero", updated_at: now - 3600 },
      { run: "ttt-2", game: "tictactoe", algorithm: "muzero", env_steps: 640, updated_at: now },
    ] });
    const cards = screen.getByTestId("run-list").querySelectorAll("li");
    expect([...cards].map((c) => c.dataset.run)).toEqual(["ttt-2", "old-1"]);
    expect(cards[0].querySelector(".dot.live")).not.toBeNull();
    expect(cards[1].querySelector(".dot.stale")).not.toBeNull();
    expect(cards[0].textContent).toContain("640");
    expect(cards[0].querySelector('a[href="#/play/ttt-2"]')).not.toBeNull();
  });

  it("shows the bridge's error frames and the connection state", () => {
    const { socket } = renderWithClient(<App />);
    expect(screen.getByTestId("connection").dataset.state).toBe("open");
    socket.receive({ type: "error", message: "unknown op 'frob'", op: "frob" });
    expect(screen.getByTestId("errors").textContent).toContain("frob: unknown op 'frob'");
    socket.receive("garbage");
    expect(screen.getByTestId("errors").textContent).toContain("not JSON");
  });
});
