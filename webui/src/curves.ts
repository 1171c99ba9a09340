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

/** The chart a tag is drawn in: tags of like scale share one. */
export function chartOf(tag: string): string {
  const t = tag.toLowerCase();
  if (t.startsWith("eval/")) return "Evaluation (win rates vs bots)";
  if (t.includes("loss")) return "Losses";
  if (t.includes("per_s")) return "Speed (per second)";
  if (t.includes("lag")) return "Policy lag";
  const slash = t.indexOf("/");
  return slash > 0 ? `Other: ${tag.slice(0, slash)}` : "Other";
}

/** Tags grouped by chart, charts in a fixed order (losses, evaluation, speed, lag, then the rest). */
export function groupCharts(curves: Curves): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const tag of [...curves.keys()].sort()) {
    const name = chartOf(tag);
    groups.set(name, [...(groups.get(name) ?? []), tag]);
  }
  const order = ["Losses", "Evaluation (win rates vs bots)", "Speed (per second)", "Policy lag"];
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  return [...groups.entries()].sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0]));
}
