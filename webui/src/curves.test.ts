import { describe, expect, it } from "vitest";
import { MAX_POINTS_PER_TAG, addPoints, chartOf, groupCharts } from "./curves";

const p = (tag: string, step: number, value = step, t = step) => ({ tag, step, value, t });

describe("curves", () => {
  it("adds points per tag in step order, and a re-sent history once", () => {
    let c = addPoints(new Map(), [p("learn/total_loss", 20), p("learn/total_loss", 10), p("eval/rule/win", 10)]);
    c = addPoints(c, [p("learn/total_loss", 10), p("learn/total_loss", 20), p("learn/total_loss", 30)]);
    expect(c.get("learn/total_loss")!.map((x) => x.step)).toEqual([10, 20, 30]);
    expect(c.get("eval/rule/win")).toHaveLength(1);
  });

  it("keeps the newest points of a long run", () => {
    const many = Array.from({ length: MAX_POINTS_PER_TAG + 10 }, (_, i) => p("a", i));
    const c = addPoints(new Map(), many);
    expect(c.get("a")).toHaveLength(MAX_POINTS_PER_TAG);
    expect(c.get("a")![0].step).toBe(10);
  });

  it("groups tags by scale: losses, win rates, speed, lag; every other tag alone", () => {
    expect(chartOf("learn/policy_loss")).toBe("Losses");
    expect(chartOf("eval/rule/loss")).toBe("Win rates vs bots");
    expect(chartOf("eval/perfect/draw")).toBe("Win rates vs bots");
    expect(chartOf("eval/rule/loss_as_first")).toBeNull();
    expect(chartOf("eval/optimal_move_rate")).toBeNull();
    expect(chartOf("collect/env_steps_per_s")).toBe("Speed (per second)");
    expect(chartOf("learn/policy_lag")).toBe("Policy lag");
    expect(chartOf("learn/lr")).toBeNull();
    const c = addPoints(new Map(), ["learn/lr", "eval/rule/win", "learn/value_loss", "learn/policy_loss", "eval/rule/games"].map((t) => p(t, 1)));
    expect(groupCharts(c)).toEqual({
      main: [["Losses", ["learn/policy_loss", "learn/value_loss"]], ["Win rates vs bots", ["eval/rule/win"]]],
      other: ["eval/rule/games", "learn/lr"],
    });
  });
});
