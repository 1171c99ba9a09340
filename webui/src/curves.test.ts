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

  it("groups tags by scale: losses, evaluation, speed, lag, the rest", () => {
    expect(chartOf("learn/total_loss")).toBe("Losses");
    expect(chartOf("eval/rule/loss")).toBe("Evaluation (win rates vs bots)");
    expect(chartOf("collect/env_steps_per_s")).toBe("Speed (per second)");
    expect(chartOf("learn/policy_lag")).toBe("Policy lag");
    expect(chartOf("learn/lr")).toBe("Other: learn");
    const c = addPoints(new Map(), [p("learn/lr", 1), p("eval/rule/win", 1), p("learn/value_loss", 1), p("learn/policy_loss", 1)]);
    expect(groupCharts(c)).toEqual([
      ["Losses", ["learn/policy_loss", "learn/value_loss"]],
      ["Evaluation (win rates vs bots)", ["eval/rule/win"]],
      ["Other: learn", ["learn/lr"]],
    ]);
  });
});
