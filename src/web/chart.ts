// The stacked time chart of the analytics page, drawn by uPlot (bundled; canvas, small and fast).
// Stacking: each series is drawn as bars up to its cumulative total, the topmost first, so the
// lower ones paint over them; the legend and tooltips still show each series' own count.
import uPlot from 'uplot';
import { formatCount } from './format.js';

/** One stacked series: its label, colour and a count per bucket. */
export interface StackedSeries {
  readonly label: string;
  readonly color: string;
  readonly counts: readonly number[];
}

/** A chart bound to a container; `destroy` removes it and its resize observer. */
export interface StackedChart {
  destroy(): void;
}

/**
 * Draws a stacked bar chart of counts over time buckets (bucket starts in ms since the epoch).
 * Times are shown in the viewer's zone (uPlot's default local time).
 */
export function stackedBars(container: HTMLElement, bucketStarts: readonly number[], series: readonly StackedSeries[], height = 260): StackedChart {
  const xs = bucketStarts.map((ms) => ms / 1000);
  // Cumulative sums from the bottom series up.
  const cumulative: number[][] = [];
  let running = xs.map(() => 0);
  for (const s of series) {
    running = running.map((value, i) => value + (s.counts[i] ?? 0));
    cumulative.push(running);
  }
  const order = series.map((_, i) => i).reverse();
  const bars = uPlot.paths.bars!({ size: [0.8, 64], align: 0 });
  const opts: uPlot.Options = {
    width: Math.max(280, container.clientWidth),
    height,
    cursor: { points: { show: false }, drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.05] } },
    axes: [{}, { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? formatCount(t) : '')) }],
    legend: { live: true },
    series: [
      { label: 'Time' },
      ...order.map((index) => ({
        label: series[index]!.label,
        stroke: series[index]!.color,
        fill: series[index]!.color,
        width: 0,
        paths: bars,
        points: { show: false },
        // The legend shows the series' own count in the hovered bucket, not the stacked height.
        value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) => (idx === null ? '—' : formatCount(series[index]!.counts[idx] ?? 0)),
      })),
    ],
  };
  const data: uPlot.AlignedData = [xs, ...order.map((index) => cumulative[index]!)];
  const plot = new uPlot(opts, data, container);
  const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, container.clientWidth), height }));
  observer.observe(container);
  return {
    destroy() {
      observer.disconnect();
      plot.destroy();
    },
  };
}
