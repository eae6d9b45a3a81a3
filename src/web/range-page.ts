// What the pages over a date range share (analytics, an agent, a type): the range toolbar, a
// content area redrawn on every change and live as visits arrive, and charts over time with a
// legend whose entries link to their pages.
import { ApiError } from './api.js';
import { stackedBars, type StackedChart } from './chart.js';
import { h, replace, type Child } from './dom.js';
import { formatCount } from './format.js';
import { liveRedraw, rangeToolbar } from './range.js';
import { replaceKeepingFocus } from './view.js';

/** What a range page draws: its panels, and the chart to mount once they are in the page. */
export interface RangeDrawing {
  readonly children: readonly Child[];
  readonly mountChart?: () => StackedChart;
}

/**
 * Draws a range page into `main`: `head` (title, facts), the toolbar, then what `draw` returns,
 * drawn again on every change of range or zone and live as the project's visits arrive. Returns
 * the cleanup (stops the live stream, removes the chart).
 */
export async function rangePage(main: HTMLElement, projectId: string, head: readonly Child[], draw: () => Promise<RangeDrawing>): Promise<() => void> {
  const content = h('div', { class: 'panels', 'aria-busy': 'false' });
  let chart: StackedChart | undefined;
  let seq = 0;
  const redraw = async () => {
    const mine = ++seq;
    content.setAttribute('aria-busy', 'true');
    try {
      const drawing = await draw();
      if (mine !== seq) return;
      chart?.destroy();
      chart = undefined;
      replaceKeepingFocus(content, ...drawing.children);
      toolbar.updated(new Date());
      chart = drawing.mountChart?.();
    } catch (error) {
      if (mine !== seq || (error instanceof ApiError && error.status === 401)) return;
      replace(content, h('p', { class: 'error' }, `This page cannot be loaded: ${error instanceof Error ? error.message : String(error)}`));
    } finally {
      if (mine === seq) content.setAttribute('aria-busy', 'false');
    }
  };
  const toolbar = rangeToolbar(() => void redraw());
  replace(main, ...head, toolbar.element, toolbar.zoneLine, content);
  await redraw();
  const stopLive = liveRedraw(projectId, () => toolbar.live(), () => void redraw());
  return () => {
    seq++;
    stopLive();
    chart?.destroy();
  };
}

/** One series of a chart over time: its key (for its link), label, colour, total and counts. */
export interface ChartSeries {
  readonly key: string | null;
  readonly label: string;
  readonly color: string;
  readonly total: number;
  readonly counts: readonly number[];
}

/** "12 visits" as the big number of a panel. */
export function bigCount(total: number, after?: string): HTMLElement {
  return h('p', { class: 'big' }, formatCount(total), h('span', { class: 'muted' }, total === 1 ? ' visit' : ' visits'), after === undefined ? null : h('span', { class: 'muted small' }, ` ${after}`));
}

/**
 * A stacked chart over time buckets with its legend (each entry a link when `linkFor` gives one):
 * the elements to place, and `mount` to draw the chart once they are in the page. Screen readers
 * get the totals as the chart's label.
 */
export function timeChart(title: string, bucketStarts: readonly string[], series: readonly ChartSeries[], linkFor: (key: string) => string | undefined = () => undefined): { box: HTMLElement; legend: HTMLElement; mount: () => StackedChart } {
  const box = h('div', { class: 'chart', role: 'img', 'aria-label': `${title}: ${series.map((s) => `${s.label} ${formatCount(s.total)}`).join(', ') || 'none'}` });
  const legend = h(
    'ul',
    { class: 'series-links', 'aria-label': `${title}: legend` },
    ...series.map((s) => {
      const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
      swatch.style.background = s.color;
      const label = `${s.label} (${formatCount(s.total)})`;
      const target = s.key === null ? undefined : linkFor(s.key);
      return h('li', {}, swatch, target === undefined ? h('span', {}, label) : h('a', { href: target }, label));
    }),
  );
  return { box, legend, mount: () => stackedBars(box, bucketStarts.map((start) => Date.parse(start)), series) };
}
