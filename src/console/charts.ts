import { count } from './format.js';

// The console's charts, drawn on the server as inline SVG (views/bar-chart.eta, views/timeline.eta):
// no chart library and no script in the browser. This module only computes the geometry and the
// words; the templates write it out, escaped like everything else. Colours are SVG presentation
// attributes, which the content security policy allows (it refuses inline style attributes).
// Each chart has a text alternative (role="img", its <title> and a <desc> that sums it up) and
// its numbers in a table beside it.

/** One bar: its key (a day, a week), how the axis and the table name it, its value (cents) and order count. */
export interface BarPoint {
  key: string;
  axis: string;
  label: string;
  value: number;
  count: number;
}

export interface BarChartSpec {
  /** Unique on the page: the ids of the title and description derive from it. */
  id: string;
  title: string;
  /** What one bar is ("day", "week"): the summary's words. */
  unit: string;
  points: BarPoint[];
  /** An amount in full ("$1,234.50"), and rounded for the axis ("$1.2K"). */
  money: (cents: number) => string;
  tick: (cents: number) => string;
  /** A line across the bars (a key's daily limit): bars above it are drawn in the warning colour. */
  limit?: { value: number; label: string } | null;
  /** Label every nth bar on the axis, counted back from the last. */
  every: number;
  /** The table's headings: the bar's column and the value's. */
  columns: [string, string];
}

const W = 480;
const H = 180;
const PAD = { left: 52, right: 8, top: 14, bottom: 22 };
const round = (n: number) => Math.round(n * 10) / 10;

/** The smallest of 1, 2, 2.5 and 5 times a power of ten at or above `n`: the axis's top. */
export function niceCeiling(n: number): number {
  if (n <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const f of [1, 2, 2.5, 5, 10]) if (f * power >= n) return f * power;
  return 10 * power;
}

/** A bar chart's geometry, its summary and its table's rows. */
export function barChart(spec: BarChartSpec) {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const n = spec.points.length;
  const values = spec.points.map((p) => p.value);
  const top = niceCeiling(Math.max(0, ...values, spec.limit?.value ?? 0));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const band = plotW / Math.max(1, n);
  const barW = Math.max(1, band * 0.7);
  const bars = spec.points
    .map((p, i) => ({ p, i }))
    .filter(({ p }) => p.value > 0)
    .map(({ p, i }) => {
      // A bar too small to see is drawn a pixel high: a day with spending never looks empty.
      const h = Math.max(1, (p.value / top) * plotH);
      const over = spec.limit ? p.value > spec.limit.value : false;
      return { x: round(PAD.left + i * band + (band - barW) / 2), y: round(PAD.top + plotH - h), w: round(barW), h: round(h), fill: over ? '#a4161a' : '#0b5394' };
    });
  const ticks = [0, top / 2, top].map((v) => ({ y: round(y(v)), label: spec.tick(v) }));
  // A label centred under a bar at either end would be cut by the edge: it ends (or starts) there instead.
  const axis = spec.points.flatMap((p, i) => {
    if ((n - 1 - i) % spec.every !== 0) return [];
    const x = PAD.left + i * band + band / 2;
    const half = p.axis.length * 3.3;
    if (x + half > W - PAD.right) return [{ x: W - PAD.right, anchor: 'end', label: p.axis }];
    if (x - half < PAD.left) return [{ x: PAD.left, anchor: 'start', label: p.axis }];
    return [{ x: round(x), anchor: 'middle', label: p.axis }];
  });
  const limit = spec.limit ? { y: round(y(spec.limit.value)), label: spec.limit.label } : null;

  const total = values.reduce((a, b) => a + b, 0);
  const most = spec.points.reduce<BarPoint | null>((best, p) => (p.value > 0 && (!best || p.value > best.value) ? p : best), null);
  const active = spec.points.filter((p) => p.value > 0).length;
  const summary = [
    `${spec.money(total)} in all over ${n} ${spec.unit}s`,
    most ? `${active} ${spec.unit}${active === 1 ? '' : 's'} with any, the most ${spec.money(most.value)} (${most.label})` : `none in any ${spec.unit}`,
    ...(spec.limit ? [spec.limit.label] : []),
  ].join('; ');

  return {
    id: spec.id,
    title: spec.title,
    summary: `${summary}.`,
    width: W,
    height: H,
    left: PAD.left,
    right: W - PAD.right,
    baseline: round(y(0)),
    tickX: PAD.left - 6,
    axisY: H - 6,
    bars,
    ticks,
    axis,
    limit,
    columns: spec.columns,
    rows: spec.points.map((p) => ({ key: p.key, label: p.label, value: spec.money(p.value), count: count(p.count) })),
    total: spec.money(total),
    totalCount: count(spec.points.reduce((a, p) => a + p.count, 0)),
  };
}
export type BarChart = ReturnType<typeof barChart>;

/** One step of a timeline: its name, and whether it happened, is still to come, failed or ended the order. */
export interface TimelineDot {
  label: string;
  state: 'done' | 'todo' | 'failed' | 'ended';
}

const TW = 560;
const TH = 64;
const TPAD = 36;
const DOT: Record<TimelineDot['state'], { fill: string; stroke: string }> = {
  done: { fill: '#0b5394', stroke: '#0b5394' },
  todo: { fill: '#ffffff', stroke: '#767676' },
  failed: { fill: '#a4161a', stroke: '#a4161a' },
  ended: { fill: '#555555', stroke: '#555555' },
};

/** A timeline's geometry: its steps evenly spaced on a line, those that happened filled, and the line drawn through to the last of them. */
export function timelineChart(spec: { id: string; title: string; summary: string; dots: TimelineDot[] }) {
  const n = spec.dots.length;
  const step = n > 1 ? (TW - 2 * TPAD) / (n - 1) : 0;
  const x = (i: number) => round(TPAD + i * step);
  const lastDone = spec.dots.reduce((last, d, i) => (d.state === 'todo' ? last : i), 0);
  return {
    id: spec.id,
    title: spec.title,
    summary: spec.summary,
    width: TW,
    height: TH,
    lineY: 20,
    labelY: 52,
    line: { x1: x(0), x2: x(n - 1) },
    reached: { x1: x(0), x2: x(lastDone) },
    dots: spec.dots.map((d, i) => ({ cx: x(i), label: d.label, ...DOT[d.state] })),
  };
}
export type TimelineChart = ReturnType<typeof timelineChart>;
