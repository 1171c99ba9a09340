// Curve points per tag, as the run page keeps them: history first, then live points, merged without
// duplicates (a reconnect re-sends the history) and kept in step order.

import { CurvePoint } from "./protocol";

export type Curves = ReadonlyMap<string, readonly CurvePoint[]>;

/** Points kept per tag; the oldest go first (the chart shows the whole run, thinned). */
export const MAX_POINTS_PER_TAG = 5000;

/** A new Curves with `points` added (same tag, step and time: kept once). */
export function addPoints(curves: Curves, points: readonly CurvePoint[]): Curves {
  if (points.length === 0) return curves;
  const out = new Map(curves);
  const byTag = new Map<string, CurvePoint[]>();
  for (const p of points) {
    const list = byTag.get(p.tag) ?? [];
    list.push(p);
    byTag.set(p.tag, list);
  }
  for (const [tag, added] of byTag) {
    const old = out.get(tag) ?? [];
    const seen = new Set(old.map((p) => `${p.step}|${p.t}`));
    const merged = old.slice();
    for (const p of added) {
      const key = `${p.step}|${p.t}`;
      if (seen.has(key)) continue;
      seen.add(key);
      merged.push(p);
    }
    merged.sort((a, b) => a.step - b.step || a.t - b.t);
    out.set(tag, merged.length > MAX_POINTS_PER_TAG ? merged.slice(merged.length - MAX_POINTS_PER_TAG) : merged);
  }
  return out;
}

export const MAIN_CHARTS = ["Losses", "Win rates vs bots", "Speed (per second)", "Policy lag"] as const;

/** The main chart a tag is drawn in (tags of like scale share one), or null: a chart of its own, under "more". */
export function chartOf(tag: string): string | null {
  const t = tag.toLowerCase();
  if (/^eval\/[^/]+\/(win|draw|loss)$/.test(t)) return "Win rates vs bots";
  if (t.startsWith("eval/")) return null;
  if (t.includes("loss")) return "Losses";
  if (t.includes("per_s")) return "Speed (per second)";
  if (t.includes("lag")) return "Policy lag";
  return null;
}

/** The main charts that have tags, in MAIN_CHARTS order, each with its tags; then every other tag, sorted. */
export function groupCharts(curves: Curves): { main: [string, string[]][]; other: string[] } {
  const tags = [...curves.keys()].sort();
  const main: [string, string[]][] = [];
  for (const name of MAIN_CHARTS) {
    const mine = tags.filter((t) => chartOf(t) === name);
    if (mine.length) main.push([name, mine]);
  }
  return { main, other: tags.filter((t) => chartOf(t) === null) };
}
