import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { LineChart, formatNumber } from "./LineChart";

afterEach(cleanup);

const pts = (tag: string, n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => ({ tag, step: i * 10, value: f(i), t: i }));

describe("LineChart", () => {
  it("draws one line per series scaled to the shared axes, with each series' latest value", () => {
    render(<LineChart title="Losses" series={[{ tag: "a", points: pts("a", 3, (i) => 2 - i) }, { tag: "b", points: pts("b", 3, () => 0.5) }]} />);
    const fig = screen.getByTestId("chart-losses");
    expect(fig.dataset.points).toBe("6");
    const a = fig.querySelector('polyline[data-tag="a"]')!.getAttribute("points")!.split(" ").map((p) => p.split(",").map(Number));
    // Highest value at the top (smallest y), x increasing with the step.
    expect(a[0][1]).toBeLessThan(a[2][1]);
    expect(a[0][0]).toBeLessThan(a[1][0]);
    expect(fig.textContent).toContain("a: 0");
    expect(fig.textContent).toContain("b: 0.500");
    expect(fig.textContent).toContain("20 env steps");
  });

  it("thins a long run for drawing, keeps its last point, and counts every point", () => {
    render(<LineChart title="Long" series={[{ tag: "x", points: pts("x", 200_000, (i) => Math.sin(i)) }]} />);
    const line = screen.getByTestId("chart-long").querySelector("polyline")!;
    expect(line.dataset.points).toBe("200000");
    const drawn = line.getAttribute("points")!.split(" ");
    expect(drawn.length).toBeLessThanOrEqual(601);
    expect(drawn[drawn.length - 1].startsWith("588.0,")).toBe(true); // the right edge: W - PAD.right
  });

  it("draws a lone point as a dot and an empty chart as a note", () => {
    render(<LineChart title="One" series={[{ tag: "x", points: pts("x", 1, () => 3) }]} />);
    expect(screen.getByTestId("chart-one").querySelector('circle[data-tag="x"]')).not.toBeNull();
    cleanup();
    render(<LineChart title="None" series={[]} />);
    expect(screen.getByTestId("chart-none").textContent).toContain("no points yet");
  });

  it("formats numbers for the axes and legend", () => {
    expect(formatNumber(3)).toBe("3");
    expect(formatNumber(0.12345)).toBe("0.123");
    expect(formatNumber(123.45)).toBe("123.5");
    expect(formatNumber(2e-5)).toBe("2.00e-5");
    expect(formatNumber(1234567)).toBe("1.23e+6");
  });
});
