// A small SVG line chart: one line per series over a shared x axis (env steps), min / max labels, and a
// legend with each series' latest value. Long series are thinned for drawing; the data is never changed.

import { CurvePoint } from "../protocol";

export interface Series {
  tag: string;
  points: readonly CurvePoint[];
}

const W = 600;
const H = 220;
const PAD = { left: 52, right: 12, top: 10, bottom: 24 };
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];
/** Points drawn per line at most. */
const MAX_DRAWN = 600;

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(a >= 100 ? 1 : 3);
}

function thin(points: readonly CurvePoint[]): readonly CurvePoint[] {
  if (points.length <= MAX_DRAWN) return points;
  const stride = points.length / MAX_DRAWN;
  const out: CurvePoint[] = [];
  for (let i = 0; i < MAX_DRAWN; i++) out.push(points[Math.floor(i * stride)]);
  out.push(points[points.length - 1]);
  return out;
}

export function LineChart({ title, series }: { title: string; series: Series[] }) {
  const all = series.flatMap((s) => s.points);
  const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  if (all.length === 0) {
    return (
      <figure className="chart" data-testid={`chart-${slug}`}>
        <figcaption>{title}</figcaption>
        <p className="muted">no points yet</p>
      </figure>
    );
  }
  // Loops, not Math.min(...points): a long run has more points than a call takes arguments.
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const p of all) {
    x0 = Math.min(x0, p.step);
    x1 = Math.max(x1, p.step);
    y0 = Math.min(y0, p.value);
    y1 = Math.max(y1, p.value);
  }
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) {
    y0 -= Math.abs(y0) * 0.1 || 1;
    y1 += Math.abs(y1) * 0.1 || 1;
  }
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const sy = (y: number) => H - PAD.bottom - ((y - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  return (
    <figure className="chart" data-testid={`chart-${slug}`} data-points={all.length}>
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} preserveAspectRatio="none">
        <line className="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <line className="axis" x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={H - PAD.bottom} />
        <text className="tick" x={PAD.left - 4} y={PAD.top + 10} textAnchor="end">{formatNumber(y1)}</text>
        <text className="tick" x={PAD.left - 4} y={H - PAD.bottom} textAnchor="end">{formatNumber(y0)}</text>
        <text className="tick" x={PAD.left} y={H - 6}>{formatNumber(x0)}</text>
        <text className="tick" x={W - PAD.right} y={H - 6} textAnchor="end">{`${formatNumber(x1)} env steps`}</text>
        {series.map((s, i) => {
          const drawn = thin(s.points);
          const color = COLORS[i % COLORS.length];
          if (drawn.length === 1) {
            return <circle key={s.tag} cx={sx(drawn[0].step)} cy={sy(drawn[0].value)} r={3} fill={color} data-tag={s.tag} data-points={s.points.length} />;
          }
          return (
            <polyline
              key={s.tag}
              fill="none"
              stroke={color}
              strokeWidth={2}
              vectorEffect="non-scaling-stroke"
              points={drawn.map((p) => `${sx(p.step).toFixed(1)},${sy(p.value).toFixed(1)}`).join(" ")}
              data-tag={s.tag}
              data-points={s.points.length}
            />
          );
        })}
      </svg>
      <ul className="legend">
        {series.map((s, i) => (
          <li key={s.tag}>
            <span className="swatch" style={{ background: COLORS[i % COLORS.length] }} />
            {s.tag}: {s.points.length ? formatNumber(s.points[s.points.length - 1].value) : "-"}
          </li>
        ))}
      </ul>
    </figure>
  );
}
