// The analytics page: visits over time by agent type (stacked chart), top agents, verification
// outcomes (spoofed agents stand out), top paths, AI referrals and robots.txt violations over a
// chosen date range, with CSV exports of each.
import { AGENT_TYPES } from '../../catalog/types.js';
import { ApiError, apiUrl, request, type StatsJson, type TopPathsJson, type ViolationsJson } from '../api.js';
import type { Page } from '../app.js';
import { stackedBars, type StackedChart } from '../chart.js';
import { field, h, replace, type Child } from '../dom.js';
import { formatCount, formatDateTime, formatShare, formatTime, RESULT_LABELS, viewerTimeZone } from '../format.js';

// One colour per agent type, in the catalog's display order, plus browsers/unknown and the rest.
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#499894', '#8cd17d', '#b6992d', '#79706e', '#d4a6c8', '#a0cbe8'];
const NO_AGENT_COLOR = '#c9ced6';
const OTHER_COLOR = '#8a8f98';

const RANGES: Record<string, { label: string; ms: number; interval: 'minute' | 'hour' | 'day' }> = {
  '1h': { label: 'Last hour', ms: 3_600_000, interval: 'minute' },
  '24h': { label: 'Last 24 hours', ms: 86_400_000, interval: 'hour' },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, interval: 'hour' },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000, interval: 'day' },
};

/** A horizontal bar showing a share of the largest value (width set through the CSSOM, allowed by the CSP). */
function bar(value: number, max: number, className = ''): HTMLElement {
  const fill = h('span', { class: `bar-fill ${className}` });
  fill.style.width = `${max === 0 ? 0 : Math.max(2, (value / max) * 100)}%`;
  return h('span', { class: 'bar', 'aria-hidden': 'true' }, fill);
}

function panel(title: string, id: string, csv: string | undefined, ...children: Child[]): HTMLElement {
  return h(
    'section',
    { class: 'card panel', 'aria-labelledby': id },
    h('div', { class: 'panel-head' }, h('h2', { id }, title), csv === undefined ? null : h('a', { href: csv, class: 'csv', download: true, 'aria-label': `${title} as CSV` }, 'CSV')),
    ...children,
  );
}

function table(caption: string, head: readonly string[], rows: readonly Child[][], numeric: ReadonlySet<number> = new Set()): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'compact' },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...head.map((label, i) => h('th', { scope: 'col', class: numeric.has(i) ? 'num' : '' }, label)))),
      h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell, i) => h('td', { class: numeric.has(i) ? 'num' : '' }, cell))))),
    ),
  );
}

/** Draws the analytics page. */
export const renderAnalytics: Page = async ({ main, project }) => {
  const p = project!;
  const rangeSelect = h('select', {}, ...Object.entries(RANGES).map(([value, r]) => h('option', { value, selected: value === '24h' }, r.label)), h('option', { value: 'custom' }, 'Custom dates'));
  const fromInput = h('input', { type: 'date' });
  const toInput = h('input', { type: 'date' });
  const custom = h('div', { class: 'row custom-range' }, field('From', fromInput), field('To (inclusive)', toInput));
  custom.hidden = true;
  const refreshButton = h('button', { type: 'button' }, 'Refresh');
  const content = h('div', { class: 'panels', 'aria-live': 'polite', 'aria-busy': 'false' });
  let chart: StackedChart | undefined;
  let seq = 0;

  const range = (): { from: string; to: string; interval: 'minute' | 'hour' | 'day' } => {
    if (rangeSelect.value === 'custom' && fromInput.value !== '' && toInput.value !== '') {
      // Dates are the viewer's local days: midnight to the midnight after the last day.
      const from = new Date(`${fromInput.value}T00:00`);
      const to = new Date(`${toInput.value}T00:00`);
      to.setDate(to.getDate() + 1);
      const days = (to.getTime() - from.getTime()) / 86_400_000;
      return { from: from.toISOString(), to: to.toISOString(), interval: days <= 2 ? 'hour' : 'day' };
    }
    const chosen = RANGES[rangeSelect.value] ?? RANGES['24h']!;
    const now = Date.now();
    return { from: new Date(now - chosen.ms).toISOString(), to: new Date(now).toISOString(), interval: chosen.interval };
  };

  const draw = async () => {
    const mine = ++seq;
    const { from, to, interval } = range();
    const q = { project: p.id, from, to };
    content.setAttribute('aria-busy', 'true');
    const [byType, byAgent, byResult, spoofed, byReferral, topPaths, violations] = await Promise.all([
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent_type', limit: AGENT_TYPES.length + 1 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent', limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'result', limit: 4 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent', result: 'verification_failed', limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'referral', limit: 20 } }),
      request<TopPathsJson>('GET', '/stats/top-paths', { params: { ...q, limit: 10 } }),
      request<ViolationsJson>('GET', '/robots-violations', { params: q }),
    ]);
    if (mine !== seq) return;
    chart?.destroy();
    chart = undefined;
    const csv = (path: string, extra: Record<string, string | number> = {}) => apiUrl(path, { ...q, ...extra, format: 'csv' });

    // Visits over time by agent type.
    const typeIndex = (key: string | null) => (key === null ? -1 : AGENT_TYPES.indexOf(key as (typeof AGENT_TYPES)[number]));
    const typeSeries = byType.series
      .map((s, i) => ({ s, i }))
      .sort((a, b) => typeIndex(a.s.key) - typeIndex(b.s.key))
      .map(({ s, i }) => ({
        label: s.key ?? 'Browsers and unknown',
        color: s.key === null ? NO_AGENT_COLOR : (PALETTE[typeIndex(s.key) % PALETTE.length] ?? OTHER_COLOR),
        counts: byType.buckets.map((b) => b.counts[i] ?? 0),
      }));
    if (byType.other > 0) typeSeries.push({ label: 'Other', color: OTHER_COLOR, counts: byType.buckets.map((b) => b.other) });
    const chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': `Visits over time by agent type: ${byType.series.map((s) => `${s.key ?? 'browsers and unknown'} ${formatCount(s.total)}`).join(', ') || 'none'}` });
    const overTime = panel(
      'Visits over time by agent type',
      'chart-title',
      csv('/stats', { interval, by: 'agent_type' }),
      h('p', { class: 'big' }, formatCount(byType.total), h('span', { class: 'muted' }, ' visits')),
      byType.total === 0 ? h('p', { class: 'empty' }, 'No visits in this range yet — send a test visit from ', h('a', { href: `#/p/${encodeURIComponent(p.id)}/settings` }, 'the settings page'), '.') : chartBox,
    );

    // Verification outcomes: spoofed (verification_failed) first and in red when there are any.
    const resultTotals = new Map(byResult.series.map((s) => [s.key, s.total]));
    const outcomes = panel(
      'Verification outcomes',
      'outcomes-title',
      csv('/stats', { interval, by: 'result' }),
      h(
        'div',
        { class: 'tiles' },
        ...['verification_failed', 'verified', 'not_verifiable', 'unknown_agent'].map((key) => {
          const n = resultTotals.get(key) ?? 0;
          return h('div', { class: `tile result-${key}${key === 'verification_failed' && n > 0 ? ' alarm' : ''}` }, h('span', { class: 'tile-n' }, formatCount(n)), h('span', { class: 'tile-label' }, RESULT_LABELS[key] ?? key));
        }),
      ),
      spoofed.series.length === 0
        ? h('p', { class: 'muted' }, 'No spoofed agents: every agent that could be checked was genuine.')
        : h('div', {}, h('h3', {}, 'Spoofed agents'), table('Spoofed agents', ['Agent', 'Visits'], spoofed.series.map((s) => [h('strong', {}, s.agent_name ?? s.key ?? '?'), formatCount(s.total)]), new Set([1]))),
    );

    // Top agents.
    const agentMax = Math.max(0, ...byAgent.series.map((s) => s.total));
    const agents = panel(
      'Top agents',
      'agents-title',
      csv('/stats', { interval, by: 'agent', limit: 100 }),
      byAgent.series.length === 0
        ? h('p', { class: 'empty' }, 'No visits yet.')
        : table(
            'Top agents',
            ['Agent', 'Visits', ''],
            byAgent.series.map((s) => [
              s.key === null ? h('span', { class: 'muted' }, 'Browsers and unknown') : h('span', {}, h('strong', {}, s.agent_name ?? s.key), h('span', { class: 'type' }, s.agent_type ?? '')),
              h('span', { title: formatShare(s.total, byAgent.total) }, formatCount(s.total)),
              bar(s.total, agentMax),
            ]),
            new Set([1]),
          ),
    );

    // Top paths.
    const pathMax = Math.max(0, ...topPaths.paths.map((r) => r.count));
    const paths = panel(
      'Top paths (agents)',
      'paths-title',
      csv('/stats/top-paths', { limit: 1000 }),
      topPaths.paths.length === 0
        ? h('p', { class: 'empty' }, 'No agent visits yet.')
        : table('Top paths', ['Path', 'Agent', 'Visits', ''], topPaths.paths.map((r) => [h('span', { class: 'path' }, r.path), r.agent_name ?? r.agent_id ?? '—', formatCount(r.count), bar(r.count, pathMax)]), new Set([2])),
    );

    // AI referrals: humans arriving from AI answers.
    const referrals = byReferral.series.filter((s) => s.key !== null);
    const referralMax = Math.max(0, ...referrals.map((s) => s.total));
    const referralPanel = panel(
      'AI referrals',
      'referrals-title',
      csv('/stats', { interval, by: 'referral' }),
      referrals.length === 0
        ? h('p', { class: 'empty' }, 'No visitors arrived from AI assistants in this range.')
        : table('AI referrals', ['From', 'Visitors', ''], referrals.map((s) => [s.key!, formatCount(s.total), bar(s.total, referralMax, 'bar-referral')]), new Set([1])),
    );

    // robots.txt violations against the saved rules.
    const violationPanel = panel(
      'robots.txt violations',
      'violations-title',
      csv('/robots-violations'),
      violations.robots === null
        ? h('p', { class: 'empty' }, 'No robots rules saved — choose agent types on ', h('a', { href: `#/p/${encodeURIComponent(p.id)}/settings` }, 'the settings page'), ' to count violations.')
        : violations.violations.length === 0
          ? h('p', { class: 'muted' }, 'No agent visited a path its rules disallow.')
          : table(
              'robots.txt violations',
              ['Agent', 'Path', 'Rule', 'Visits', 'Last'],
              violations.violations.map((v) => [h('strong', {}, v.agent_name), h('span', { class: 'path' }, v.path), h('code', {}, `Disallow: ${v.rule}`), formatCount(v.count), h('time', { datetime: v.last, title: formatDateTime(v.last) }, formatTime(v.last))]),
              new Set([3]),
            ),
    );

    replace(
      content,
      overTime,
      h('div', { class: 'grid' }, outcomes, agents, paths, referralPanel),
      violationPanel,
      h('p', { class: 'muted small' }, 'Export the latest visits (up to 10,000, newest first): ', h('a', { href: apiUrl('/visits', { project: p.id, format: 'csv' }), download: true }, 'visits as CSV'), '.'),
    );
    content.setAttribute('aria-busy', 'false');
    if (byType.total > 0) chart = stackedBars(chartBox, byType.buckets.map((b) => Date.parse(b.start)), typeSeries);
  };
  const redraw = () =>
    draw().catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 401) return;
      content.setAttribute('aria-busy', 'false');
      replace(content, h('p', { class: 'error' }, `The analytics cannot be loaded: ${error instanceof Error ? error.message : String(error)}`));
    });
  rangeSelect.addEventListener('change', () => {
    custom.hidden = rangeSelect.value !== 'custom';
    if (rangeSelect.value === 'custom') {
      const today = new Date();
      const week = new Date(today.getTime() - 6 * 86_400_000);
      const day = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      if (fromInput.value === '') fromInput.value = day(week);
      if (toInput.value === '') toInput.value = day(today);
    }
    void redraw();
  });
  fromInput.addEventListener('change', () => void redraw());
  toInput.addEventListener('change', () => void redraw());
  refreshButton.addEventListener('click', () => void redraw());

  replace(
    main,
    h('h1', {}, `${p.name}: analytics`),
    h('div', { class: 'toolbar card' }, field('Date range', rangeSelect), custom, h('div', { class: 'toolbar-end' }, refreshButton)),
    h('p', { class: 'muted small' }, `Times in ${viewerTimeZone()}.`),
    content,
  );
  await redraw();
  return () => {
    seq++;
    chart?.destroy();
  };
};
