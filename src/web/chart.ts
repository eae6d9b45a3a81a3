// The stacked time chart of the analytics page, drawn by uPlot (bundled; canvas, small and fast).
// Stacking: each series is drawn as bars up to its cumulative total, the topmost first, so the
// lower ones paint over them; the legend and tooltips still show each series' own count.
import uPlot from 'uplot';
import { formatCount, formatDateTime, isUtc } from './format.js';

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
 * Times are shown in the viewer's zone (uPlot's default local time), or in UTC when the page says so.
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
    ...(isUtc() ? { tzDate: (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC') } : {}),
    width: Math.max(260, container.clientWidth),
    height,
    cursor: { points: { show: false }, drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.05] } },
    axes: [{}, { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? formatCount(t) : '')) }],
    // The page draws its own legend (with links); hovering shows the bucket's counts in a line above.
    legend: { show: false },
    hooks: {
      setCursor: [
        (u) => {
          const index = u.cursor.idx;
          if (index === null || index === undefined) {
            readout.textContent = '\u00a0';
            return;
          }
          const counts = series.map((s) => [s.label, s.counts[index] ?? 0] as const).filter(([, n]) => n > 0);
          readout.textContent = `${formatDateTime(new Date(bucketStarts[index]!).toISOString())}: ${counts.length === 0 ? 'no visits' : counts.map(([label, n]) => `${label} ${formatCount(n)}`).join(', ')}`;
        },
      ],
    },
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
  const readout = document.createElement('p');
  readout.className = 'chart-readout';
  readout.setAttribute('aria-hidden', 'true');
  readout.textContent = '\u00a0';
  container.appendChild(readout);
  const plot = new uPlot(opts, data, container);
  const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(260, container.clientWidth), height }));
  observer.observe(container);
  return {
    destroy() {
      observer.disconnect();
      plot.destroy();
      readout.remove();
    },
  };
}
