// The analytics page: visits over time by agent type, verification outcomes (spoofed agents stand
// out), top agents, top pages, status codes by agent, AI referrals and their landing pages, the
// crawl-to-referral ratio of each AI operator and robots.txt violations, over a range kept in the
// URL, redrawn live as visits arrive. Agents, types and violations link to their own pages.
import { AGENT_TYPES } from '../../catalog/types.js';
import { TEST_AGENT_ID } from '../../catalog/test-agent.js';
import { apiUrl, request, type OperatorsJson, type StatsJson, type StatusCodesJson, type TopPathsJson, type ViolationsJson } from '../api.js';
import type { Page } from '../app.js';
import { h } from '../dom.js';
import { formatCount, formatDateTime, formatDecimal, formatShare, formatTime, plural, referralName } from '../format.js';
import { clientAddressNoticeSlot } from '../client-address-notice.js';
import { chosenRange } from '../range.js';
import { bigCount, rangePage, timeChart, type RangeDrawing } from '../range-page.js';
import { href } from '../route-state.js';
import { bar, clippedPath, dataTable, empty, outcomeSummary, outcomeTiles, panel } from '../view.js';

// One colour per agent type, in the catalog's display order, plus browsers/unknown and the rest.
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#499894', '#8cd17d', '#b6992d', '#79706e', '#d4a6c8', '#a0cbe8'];
export const NO_AGENT_COLOR = '#c9ced6';
export const OTHER_COLOR = '#8a8f98';

/** The colour of an agent type's series. */
export function typeColor(type: string | null): string {
  if (type === null) return NO_AGENT_COLOR;
  const index = AGENT_TYPES.indexOf(type as (typeof AGENT_TYPES)[number]);
  return index === -1 ? OTHER_COLOR : PALETTE[index % PALETTE.length]!;
}

/** A status code as a badge: 4xx and 5xx stand out. */
export function statusBadge(status: string | null): HTMLElement {
  if (status === null) return h('span', { class: 'muted' }, 'none');
  const kind = status.startsWith('5') ? 'status-5xx' : status.startsWith('4') ? 'status-4xx' : status.startsWith('3') ? 'status-3xx' : 'status-2xx';
  return h('span', { class: `status ${kind}` }, status);
}

/** Draws the analytics page. */
export const renderAnalytics: Page = async ({ main, project }) => {
  const p = project!;
  const agentHref = (id: string) => href(['p', p.id, 'agents', id]);
  const typeHref = (type: string) => href(['p', p.id, 'types', type]);

  const draw = async (): Promise<RangeDrawing> => {
    const { from, to, interval } = chosenRange();
    const q = { project: p.id, from, to };
    const [byType, byAgent, byResult, spoofed, byReferral, topPaths, violations, topPages, landing, statuses, operators, tests] = await Promise.all([
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent_type', limit: AGENT_TYPES.length + 1 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent', limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'result', limit: 4 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent', result: 'verification_failed', limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'referral', referral: 'any', limit: 20 } }),
      request<TopPathsJson>('GET', '/stats/top-paths', { params: { ...q, limit: 10 } }),
      request<ViolationsJson>('GET', '/robots-violations', { params: q }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'path', agent: 'any', limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'path', referral: 'any', limit: 10 } }),
      request<StatusCodesJson>('GET', '/stats/status-codes', { params: { ...q, limit: 10, statuses: 5 } }),
      request<OperatorsJson>('GET', '/stats/operators', { params: q }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'result', agent: TEST_AGENT_ID, limit: 1 } }),
    ]);
    const csv = (path: string, extra: Record<string, string | number> = {}) => apiUrl(path, { ...q, ...extra, format: 'csv' });

    // Visits over time by agent type; the legend below links each type to its page.
    const typeIndex = (key: string | null) => (key === null ? -1 : AGENT_TYPES.indexOf(key as (typeof AGENT_TYPES)[number]));
    const typeSeries = byType.series
      .map((s, i) => ({ s, i }))
      .sort((a, b) => typeIndex(a.s.key) - typeIndex(b.s.key))
      .map(({ s, i }) => ({ key: s.key, total: s.total, label: s.key ?? 'Browsers and unknown', color: typeColor(s.key), counts: byType.buckets.map((b) => b.counts[i] ?? 0) }));
    if (byType.other > 0) typeSeries.push({ key: null, total: byType.other, label: 'Other', color: OTHER_COLOR, counts: byType.buckets.map((b) => b.other) });
    const chart = timeChart('Visits over time by agent type', byType.buckets.map((b) => b.start), typeSeries, typeHref);
    const overTime = panel(
      'Visits over time by agent type',
      'chart-title',
      csv('/stats', { interval, by: 'agent_type' }),
      bigCount(byType.total),
      // The projects list leaves test visits out of its counts unless asked; here they are counted.
      tests.total === 0 ? null : h('p', { class: 'muted small' }, `Including ${plural(tests.total, 'test visit')} (sent from the settings page), which the projects list leaves out.`),
      byType.total === 0 ? empty('No visits in this range yet — send a test visit from ', h('a', { href: href(['p', p.id, 'settings']) }, 'the settings page'), '.') : chart.box,
      byType.total === 0 ? null : chart.legend,
    );

    // Verification outcomes: spoofed first and in red when there are any; an honest summary.
    const resultTotals = new Map(byResult.series.map((s) => [s.key, s.total]));
    const outcomes = panel(
      'Verification outcomes',
      'outcomes-title',
      csv('/stats', { interval, by: 'result' }),
      outcomeTiles(resultTotals, (result) => href(['p', p.id, 'timeline'], { result }, false)),
      h('p', { class: 'summary' }, outcomeSummary(resultTotals)),
      spoofed.series.length === 0
        ? null
        : h(
            'div',
            {},
            h('h3', {}, 'Spoofed agents'),
            dataTable(
              'Spoofed agents',
              [
                { label: 'Agent', cell: (s) => (s.key === null ? '?' : h('a', { href: agentHref(s.key) }, h('strong', {}, s.agent_name ?? s.key))) },
                { label: 'Visits', numeric: true, cell: (s) => h('a', { href: href(['p', p.id, 'timeline'], { agent: s.key ?? undefined, result: 'verification_failed' }, false), 'aria-label': `${plural(s.total, 'spoofed visit')} by ${s.agent_name ?? s.key}` }, formatCount(s.total)) },
              ],
              spoofed.series,
            ),
          ),
    );

    // Top agents, each linking to its page.
    const agentMax = Math.max(0, ...byAgent.series.map((s) => s.total));
    const agents = panel(
      'Top agents',
      'agents-title',
      csv('/stats', { interval, by: 'agent', limit: 100 }),
      byAgent.series.length === 0
        ? empty('No visits in this range.')
        : dataTable(
            'Top agents',
            [
              {
                label: 'Agent',
                cell: (s) => (s.key === null ? h('span', { class: 'muted' }, 'Browsers and unknown') : h('span', {}, h('a', { href: agentHref(s.key) }, h('strong', {}, s.agent_name ?? s.key)), h('span', { class: 'type' }, s.agent_type ?? ''))),
              },
              { label: 'Visits', numeric: true, cell: (s) => h('span', { title: formatShare(s.total, byAgent.total) }, formatCount(s.total)) },
              { label: 'Share', hiddenLabel: true, cell: (s) => bar(s.total, agentMax) },
            ],
            byAgent.series,
            { className: 'top-agents' },
          ),
    );

    /** A panel of the pages most visited by one kind of visitor (a stats answer by path). */
    const pagesPanel = (title: string, id: string, kind: Record<string, string>, stats: StatsJson, count: string, none: string, barClass = '') => {
      const max = Math.max(0, ...stats.series.map((s) => s.total));
      return panel(
        title,
        id,
        csv('/stats', { interval, by: 'path', ...kind, limit: 100 }),
        stats.series.length === 0
          ? empty(none)
          : dataTable(
              title,
              [
                { label: 'Page', cell: (s) => clippedPath(s.key ?? '') },
                { label: count, numeric: true, cell: (s) => formatCount(s.total) },
                { label: 'Share', hiddenLabel: true, cell: (s) => bar(s.total, max, barClass) },
              ],
              stats.series,
            ),
      );
    };
    const pages = pagesPanel('Top pages (all agents)', 'pages-title', { agent: 'any' }, topPages, 'Agent visits', 'No agent visited a page in this range.');

    // Top (agent, path) pairs.
    const pathMax = Math.max(0, ...topPaths.paths.map((r) => r.count));
    const paths = panel(
      'Top paths by agent',
      'paths-title',
      csv('/stats/top-paths', { limit: 1000 }),
      h('p', { class: 'muted small' }, 'Paths with their query strings, as robots.txt rules match them; top pages leave query strings out.'),
      topPaths.paths.length === 0
        ? empty('No agent visits in this range.')
        : dataTable(
            'Top paths by agent',
            [
              { label: 'Path', cell: (r) => clippedPath(r.path) },
              { label: 'Agent', cell: (r) => (r.agent_id === null ? '—' : h('a', { href: agentHref(r.agent_id) }, r.agent_name ?? r.agent_id)) },
              { label: 'Visits', numeric: true, cell: (r) => formatCount(r.count) },
              { label: 'Share', hiddenLabel: true, cell: (r) => bar(r.count, pathMax) },
            ],
            topPaths.paths,
          ),
    );

    // Status codes by agent: the 404s crawlers hit stand out.
    const statusPanel = panel(
      'Status codes by agent',
      'status-title',
      undefined,
      statuses.agents.length === 0
        ? empty('No agent visits in this range.')
        : statuses.statuses.every((s) => s === null)
          ? empty('No agent visit in this range was sent with its response status code (send response_status_code with each visit).')
          : dataTable(
              'Status codes by agent',
              [
                { label: 'Agent', cell: (a) => h('a', { href: agentHref(a.agent_id) }, a.agent_name ?? a.agent_id) },
                ...statuses.statuses.map((status, i) => ({ label: status ?? 'None', numeric: true, cell: (a: StatusCodesJson['agents'][number]) => (a.counts[i] === 0 ? h('span', { class: 'muted' }, '0') : h('span', { class: status !== null && status >= '400' ? 'status-count bad' : 'status-count' }, formatCount(a.counts[i]!))) })),
                ...(statuses.agents.some((a) => a.other > 0) ? [{ label: 'Other', numeric: true, cell: (a: StatusCodesJson['agents'][number]) => formatCount(a.other) }] : []),
              ],
              statuses.agents,
              { stack: true, className: 'status-table' },
            ),
    );

    // AI referrals: humans arriving from AI answers, by product.
    const referrals = byReferral.series.filter((s) => s.key !== null);
    const referralMax = Math.max(0, ...referrals.map((s) => s.total));
    const referralPanel = panel(
      'AI referrals',
      'referrals-title',
      csv('/stats', { interval, by: 'referral' }),
      referrals.length === 0
        ? empty('No visitors arrived from AI assistants in this range.')
        : dataTable(
            'AI referrals',
            [
              { label: 'From', cell: (s) => referralName(s.key!) },
              { label: 'Visitors', numeric: true, cell: (s) => formatCount(s.total) },
              { label: 'Share', hiddenLabel: true, cell: (s) => bar(s.total, referralMax, 'bar-referral') },
            ],
            referrals,
          ),
    );

    const landingPanel = pagesPanel('Landing pages of AI referrals', 'landing-title', { referral: 'any' }, landing, 'Visitors', 'No visitors arrived from AI assistants in this range.', 'bar-referral');

    // Crawl-to-referral ratio per AI operator.
    const operatorPanel = panel(
      'Crawls per referral, by AI operator',
      'operators-title',
      undefined,
      h('p', { class: 'muted small' }, "Pages its AI agents crawled against visitors its AI products sent here. A high ratio: the operator takes much more than it sends back."),
      operators.operators.length === 0
        ? empty('No AI agent crawled and no AI product referred a visitor in this range.')
        : dataTable(
            'Crawls per referral, by AI operator',
            [
              { label: 'Operator', cell: (o) => h('span', {}, h('strong', {}, o.operator), h('span', { class: 'type' }, [...o.agents.map((a) => a.agent_name), ...o.referrals.map((r) => r.name)].join(', '))) },
              { label: 'Crawled', numeric: true, cell: (o) => formatCount(o.crawled) },
              { label: 'Referred', numeric: true, cell: (o) => formatCount(o.referred) },
              { label: 'Crawls per referral', numeric: true, cell: (o) => (o.ratio === null ? h('span', { class: 'muted' }, 'no referral') : `${formatDecimal(o.ratio)} : 1`) },
            ],
            operators.operators,
            { stack: true },
          ),
    );

    // robots.txt violations against the saved rules.
    const violationPanel = panel(
      'robots.txt violations',
      'violations-title',
      csv('/robots-violations'),
      violations.robots === null
        ? empty('No robots rules saved — choose agent types on ', h('a', { href: href(['p', p.id, 'settings']) }, 'the settings page'), ' to count violations.')
        : violations.violations.length === 0
          ? h('p', { class: 'muted' }, 'No agent visited a path its rules disallow in this range.')
          : dataTable(
              'robots.txt violations',
              [
                { label: 'Agent', cell: (v) => h('a', { href: agentHref(v.agent_id) }, h('strong', {}, v.agent_name)) },
                { label: 'Path', cell: (v) => clippedPath(v.path) },
                { label: 'Rule', cell: (v) => h('code', {}, `Disallow: ${v.rule}`) },
                { label: 'Visits', numeric: true, cell: (v) => formatCount(v.count) },
                { label: 'Last', cell: (v) => h('time', { datetime: v.last, title: formatDateTime(v.last) }, formatTime(v.last)) },
              ],
              violations.violations,
              { stack: true },
            ),
    );

    return {
      children: [
        overTime,
        h('div', { class: 'grid' }, outcomes, agents, pages, paths, referralPanel, landingPanel),
        statusPanel,
        operatorPanel,
        violationPanel,
        h('p', { class: 'muted small' }, 'Export the latest visits (up to 10,000, newest first): ', h('a', { href: apiUrl('/visits', { project: p.id, format: 'csv' }), download: true }, 'visits as CSV'), '.'),
      ],
      mountChart: byType.total > 0 ? chart.mount : undefined,
    };
  };
  return rangePage(main, p.id, [h('h1', {}, `${p.name}: analytics`), clientAddressNoticeSlot(p.id)], draw);
};
