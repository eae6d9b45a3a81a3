// One agent on one site: who it is (the catalog), when it was first and last seen, its visits over
// time by verification result, the status codes it got (the 404s it hits), the paths it visits,
// whether it follows robots.txt, and its latest visits, each opening the visit's detail.
import { orIfNotFound, request, type AgentActivityJson, type CatalogAgentJson, type StatsJson, type TopPathsJson, type ViolationsJson, type VisitJson } from '../api.js';
import type { Page } from '../app.js';
import { h, replace, setTitle } from '../dom.js';
import { formatCount, formatDateTime, formatMinute, formatTime, plural, RESULT_LABELS } from '../format.js';
import { chosenRange } from '../range.js';
import { bigCount, rangePage, timeChart, type ChartSeries, type RangeDrawing } from '../range-page.js';
import { href } from '../route-state.js';
import { clippedPath, dataTable, empty, outcomeSummary, outcomeTiles, panel, RESULT_ORDER } from '../view.js';
import { statusBadge } from './analytics.js';
import { agentFacts } from './catalog.js';
import { agentRuleButton } from './robots-rules.js';
import { visitRow, visitTable } from './timeline.js';

/** Chart colours of the verification results: spoofed red, verified green. */
export const RESULT_COLORS: Record<string, string> = { verification_failed: '#c62828', verified: '#2e7d32', not_verifiable: '#9aa3ae', unknown_agent: '#c9ced6' };

/** Stacked series of a by=result stats answer, spoofed at the bottom where it is seen first. */
export function resultSeries(stats: StatsJson): ChartSeries[] {
  return RESULT_ORDER.flatMap((result) => {
    const index = stats.series.findIndex((s) => s.key === result);
    if (index === -1) return [];
    return [{ key: result, label: RESULT_LABELS[result] ?? result, color: RESULT_COLORS[result]!, total: stats.series[index]!.total, counts: stats.buckets.map((b) => b.counts[index] ?? 0) }];
  });
}

/** What the saved robots rules say about this agent, from the lines the server gives it. */
function robotsRuleText(violations: ViolationsJson, agentType: string | undefined): string {
  const rule = violations.agent_rule;
  if (violations.robots === null) return 'No robots rules are saved for this site.';
  if (rule === undefined || rule === null) return 'Your saved rules do not name it or its type, so they do not restrict it.';
  const lines = [...rule.allow.map((path) => `Allow: ${path}`), ...rule.disallow.map((path) => `Disallow: ${path}`)].join(', ');
  if (rule.source === 'allow_agents') return rule.disallow.length === 0 ? `Your saved rules allow it by name (${lines}).` : `Your saved rules disallow its type but allow it some paths by name (${lines}).`;
  if (rule.source === 'disallow_agents') return `Your saved rules disallow it by name (${lines}).`;
  return `Your saved rules disallow its type, ${agentType ?? 'its type'} (${lines}).`;
}

const NO_ACTIVITY: AgentActivityJson = { visits: 0, results: {}, first_seen: null, last_seen: null };

/** Draws the page of one agent in a project. */
export const renderAgent: Page = async ({ main, project, route, refresh }) => {
  const p = project!;
  const agentId = route.segments[0]!;
  const [agent, seen] = await Promise.all([
    orIfNotFound(request<CatalogAgentJson>('GET', `/agents/${encodeURIComponent(agentId)}`), undefined),
    // 404: neither the catalog nor this project's visits (on any day kept) know the id.
    orIfNotFound(request<AgentActivityJson>('GET', `/stats/agents/${encodeURIComponent(agentId)}`, { params: { project: p.id } }), undefined),
  ]);
  // The id comes from the address, so a crafted link could make any text this page's heading.
  // An agent is drawn when the catalog lists it or the project's visits name it; the catalog also
  // makes an unlisted agent up from any "unlisted:Some Words" id, so one not listed must have visited.
  if (seen === undefined || (agent?.listed === false && seen.visits === 0)) {
    setTitle('No such agent', p.name);
    replace(main, h('h1', {}, 'No such agent'), h('p', {}, 'The catalog lists no agent with this id, and this project has no visits of one. ', h('a', { href: href(['p', p.id, 'agents']) }, 'All agents')));
    return;
  }
  const name = agent?.name ?? agentId;
  setTitle(name, p.name);

  const draw = async (): Promise<RangeDrawing> => {
    const { from, to, interval, label } = chosenRange();
    const q = { project: p.id, from, to, agent: agentId };
    const [activity, byResult, byStatus, notFound, topPaths, robotsFetches, violations, latest] = await Promise.all([
      // 404: an agent neither the catalog nor this project's visits know; it has no activity to show.
      orIfNotFound(request<AgentActivityJson>('GET', `/stats/agents/${encodeURIComponent(agentId)}`, { params: { project: p.id } }), NO_ACTIVITY),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'result', limit: 4 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'status', limit: 20 } }),
      request<TopPathsJson>('GET', '/stats/top-paths', { params: { ...q, status: 404, limit: 10 } }),
      request<TopPathsJson>('GET', '/stats/top-paths', { params: { ...q, limit: 10 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'path', path: '/robots.txt', limit: 1 } }),
      request<ViolationsJson>('GET', '/robots-violations', { params: q }),
      request<{ visits: VisitJson[] }>('GET', '/visits', { params: { project: p.id, agent: agentId, limit: 20 } }),
    ]);
    const timelineHref = (extra: Record<string, string> = {}) => href(['p', p.id, 'timeline'], { agent: agentId, ...extra }, false);

    const seen = (iso: string | null) => (iso === null ? h('span', { class: 'muted' }, 'Never') : h('time', { datetime: iso, title: formatDateTime(iso) }, formatMinute(iso)));
    const summary = h(
      'section',
      { class: 'card', 'aria-labelledby': 'site-title' },
      h('h2', { id: 'site-title' }, 'On this site'),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'First seen'),
        h('dd', {}, seen(activity.first_seen)),
        h('dt', {}, 'Last seen'),
        h('dd', {}, seen(activity.last_seen)),
        h('dt', {}, 'Visits recorded'),
        h('dd', {}, activity.visits === 0 ? h('span', { class: 'muted' }, 'None yet') : h('a', { href: timelineHref() }, plural(activity.visits, 'visit'))),
      ),
    );

    // Visits over time by verification result.
    const resultTotals = new Map(byResult.series.map((s) => [s.key, s.total]));
    const chart = timeChart('Visits over time by result', byResult.buckets.map((b) => b.start), resultSeries(byResult), (result) => timelineHref({ result }));
    const overTime = panel(
      'Visits over time',
      'agent-chart-title',
      undefined,
      bigCount(byResult.total, `in the ${label}`),
      byResult.total === 0 ? empty(`${name} did not visit in this range.`) : chart.box,
      byResult.total === 0 ? null : chart.legend,
      outcomeTiles(resultTotals, (result) => timelineHref({ result }), true),
      h('p', { class: 'summary' }, outcomeSummary(resultTotals)),
    );

    // Status codes, and the paths that answered 404.
    const statusTotal = byStatus.series.reduce((sum, s) => sum + s.total, 0);
    const statusPanel = panel(
      'Status codes',
      'agent-status-title',
      undefined,
      byStatus.series.length === 0
        ? empty('No visits in this range.')
        : dataTable(
            'Status codes',
            [
              { label: 'Status', cell: (s) => statusBadge(s.key) },
              { label: 'Visits', numeric: true, cell: (s) => formatCount(s.total) },
            ],
            byStatus.series,
          ),
      byStatus.series.length > 0 && byStatus.series.every((s) => s.key === null) ? h('p', { class: 'muted small' }, 'These visits were sent without response_status_code.') : null,
      h('h3', {}, 'Paths that answered 404'),
      notFound.paths.length === 0
        ? h('p', { class: 'muted' }, statusTotal === 0 ? 'No visits in this range.' : `No 404s for ${name} in this range.`)
        : dataTable(
            'Paths that answered 404',
            [
              { label: 'Path', cell: (r) => clippedPath(r.path) },
              { label: 'Visits', numeric: true, cell: (r) => formatCount(r.count) },
            ],
            notFound.paths,
          ),
    );

    const pathsPanel = panel(
      'Top paths',
      'agent-paths-title',
      undefined,
      topPaths.paths.length === 0
        ? empty('No visits in this range.')
        : dataTable(
            'Top paths',
            [
              { label: 'Path', cell: (r) => clippedPath(r.path) },
              { label: 'Visits', numeric: true, cell: (r) => formatCount(r.count) },
              { label: 'Last', cell: (r) => h('time', { datetime: r.last, title: formatDateTime(r.last) }, formatTime(r.last)) },
            ],
            topPaths.paths,
          ),
    );

    // robots.txt compliance: did it read the rules, do the rules cover it, did it break them.
    const fetches = robotsFetches.total;
    const robotsPanel = panel(
      'robots.txt compliance',
      'agent-robots-title',
      undefined,
      h(
        'ul',
        { class: 'plain-list' },
        h('li', {}, fetches === 0 ? `It did not fetch /robots.txt in this range.` : `It fetched /robots.txt ${fetches === 1 ? 'once' : `${formatCount(fetches)} times`} in this range.`),
        h('li', {}, robotsRuleText(violations, agent?.type), ' ', h('a', { href: href(['p', p.id, 'settings']) }, 'Edit the rules')),
        agent?.respects_robots_txt === true
          ? h('li', {}, 'It is documented to obey robots.txt.')
          : agent?.respects_robots_txt === false
            ? h('li', {}, 'It is documented not to obey robots.txt (as fetchers acting for a user often do not): an access policy that denies it keeps it out.')
            : null,
      ),
      agent === undefined
        ? null
        : agent.listed
          ? h('p', {}, agentRuleButton(p.id, agentId, name, violations.agent_rule, refresh))
          : h('p', { class: 'muted' }, 'Saved rules cannot name it: it is not in the catalog. A site that must keep it out turns it away with an access policy.'),
      violations.robots === null
        ? null
        : violations.violations.length === 0
          ? h('p', { class: 'ok-text' }, 'No violations: it visited no path the saved rules disallow for it in this range.')
          : h(
              'div',
              {},
              h('p', { class: 'error' }, `${plural(violations.violations.reduce((sum, v) => sum + v.count, 0), 'visit')} to disallowed paths in this range:`),
              dataTable(
                'robots.txt violations',
                [
                  { label: 'Path', cell: (v) => clippedPath(v.path) },
                  { label: 'Rule', cell: (v) => h('code', {}, `Disallow: ${v.rule}`) },
                  { label: 'Visits', numeric: true, cell: (v) => formatCount(v.count) },
                  { label: 'Last', cell: (v) => h('time', { datetime: v.last, title: formatDateTime(v.last) }, formatTime(v.last)) },
                ],
                violations.violations,
                { stack: true },
              ),
            ),
    );

    const body = h('tbody', {});
    for (const visit of latest.visits) body.appendChild(visitRow(p.id, visit));
    const recent = panel(
      'Latest visits',
      'agent-latest-title',
      undefined,
      latest.visits.length === 0 ? empty('No visits kept.') : h('div', { class: 'table-wrap' }, visitTable(`Latest visits of ${name}`, body)),
      h(
        'p',
        {},
        h('a', { href: timelineHref() }, 'All its visits on the timeline'),
        (resultTotals.get('verification_failed') ?? 0) > 0 ? h('span', {}, ' · ', h('a', { href: timelineHref({ result: 'verification_failed' }) }, 'only the spoofed ones')) : null,
      ),
    );

    return { children: [summary, overTime, h('div', { class: 'grid' }, statusPanel, pathsPanel), robotsPanel, recent], mountChart: byResult.total > 0 ? chart.mount : undefined };
  };
  return rangePage(main, p.id, [
    h('p', { class: 'crumbs' }, h('a', { href: href(['p', p.id, 'analytics']) }, 'Analytics'), ' · ', h('a', { href: href(['p', p.id, 'agents']) }, 'All agents')),
    h('h1', {}, name, agent === undefined ? null : h('span', { class: 'subtitle' }, `${agent.type} · ${agent.operator}`)),
    agent === undefined
      ? h('p', { class: 'notice-box' }, `The catalog has no agent "${agentId}"; visits recorded under this id are shown below.`)
      : h('section', { class: 'card', 'aria-labelledby': 'about-title' }, h('h2', { id: 'about-title' }, 'About'), agentFacts(agent, href(['p', p.id, 'types', agent.type]))),
  ], draw);
};
