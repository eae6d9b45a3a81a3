// One agent type on one site: its agents' visits over time, verification outcomes, top agents and
// paths, and whether the saved robots rules disallow the type; agents link to their pages.
import { AGENT_TYPES } from '../../catalog/types.js';
import { request, type AgentPageJson, type SettingsJson, type StatsJson, type TopPathsJson } from '../api.js';
import type { Page } from '../app.js';
import { h, replace, setTitle } from '../dom.js';
import { formatCount, formatShare, plural } from '../format.js';
import { chosenRange } from '../range.js';
import { bigCount, rangePage, timeChart, type RangeDrawing } from '../range-page.js';
import { href } from '../route-state.js';
import { bar, clippedPath, dataTable, empty, outcomeSummary, outcomeTiles, panel } from '../view.js';
import { OTHER_COLOR, PALETTE } from './analytics.js';

/** Draws the page of one agent type in a project. */
export const renderAgentType: Page = async ({ main, project, route }) => {
  const p = project!;
  const type = route.segments[0]!;
  if (!(AGENT_TYPES as readonly string[]).includes(type)) {
    replace(main, h('h1', {}, 'No such agent type'), h('p', {}, `"${type}" is not one of the agent types. `, h('a', { href: href(['p', p.id, 'analytics']) }, 'Back to the analytics')));
    return;
  }
  setTitle(type, p.name);
  const catalogCount = (await request<AgentPageJson>('GET', '/agents', { params: { type, limit: 1 } })).total;
  const agentHref = (id: string) => href(['p', p.id, 'agents', id]);

  const draw = async (): Promise<RangeDrawing> => {
    const { from, to, interval } = chosenRange();
    const q = { project: p.id, from, to, agent_type: type };
    const [byAgent, byResult, topPaths, settings] = await Promise.all([
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'agent', limit: 8 } }),
      request<StatsJson>('GET', '/stats', { params: { ...q, interval, by: 'result', limit: 4 } }),
      request<TopPathsJson>('GET', '/stats/top-paths', { params: { ...q, limit: 10 } }),
      request<SettingsJson>('GET', '/project-settings', { params: { project: p.id } }),
    ]);

    const series = byAgent.series.map((s, i) => ({ key: s.key, label: s.agent_name ?? s.key ?? '?', total: s.total, color: PALETTE[i % PALETTE.length]!, counts: byAgent.buckets.map((b) => b.counts[i] ?? 0) }));
    if (byAgent.other > 0) series.push({ key: null, label: 'Other agents', total: byAgent.other, color: OTHER_COLOR, counts: byAgent.buckets.map((b) => b.other) });
    const chart = timeChart('Visits over time by agent', byAgent.buckets.map((b) => b.start), series, agentHref);
    const overTime = panel(
      'Visits over time by agent',
      'type-chart-title',
      undefined,
      bigCount(byAgent.total),
      byAgent.total === 0 ? empty(`No ${type} visited in this range.`) : chart.box,
      byAgent.total === 0 ? null : chart.legend,
    );
    const resultTotals = new Map(byResult.series.map((s) => [s.key, s.total]));
    const outcomes = panel(
      'Verification outcomes',
      'type-outcomes-title',
      undefined,
      outcomeTiles(resultTotals, (result) => href(['p', p.id, 'timeline'], { agent_type: type, result }, false), true),
      h('p', { class: 'summary' }, outcomeSummary(resultTotals)),
    );
    const agentMax = Math.max(0, ...byAgent.series.map((s) => s.total));
    const agents = panel(
      'Top agents',
      'type-agents-title',
      undefined,
      byAgent.series.length === 0
        ? empty('No visits in this range.')
        : dataTable(
            `Top ${type} agents`,
            [
              { label: 'Agent', cell: (s) => (s.key === null ? '?' : h('a', { href: agentHref(s.key) }, h('strong', {}, s.agent_name ?? s.key))) },
              { label: 'Visits', numeric: true, cell: (s) => h('span', { title: formatShare(s.total, byAgent.total) }, formatCount(s.total)) },
              { label: 'Share', hiddenLabel: true, cell: (s) => bar(s.total, agentMax) },
            ],
            byAgent.series,
          ),
    );
    const paths = panel(
      'Top paths',
      'type-paths-title',
      undefined,
      topPaths.paths.length === 0
        ? empty('No visits in this range.')
        : dataTable(
            `Top paths of ${type} agents`,
            [
              { label: 'Path', cell: (r) => clippedPath(r.path) },
              { label: 'Agent', cell: (r) => (r.agent_id === null ? '—' : h('a', { href: agentHref(r.agent_id) }, r.agent_name ?? r.agent_id)) },
              { label: 'Visits', numeric: true, cell: (r) => formatCount(r.count) },
            ],
            topPaths.paths,
          ),
    );
    const disallowed = settings.robots?.agent_types.includes(type) === true;
    const named = (settings.robots?.disallow_agents?.length ?? 0) + (settings.robots?.allow_agents?.length ?? 0);
    const rules = h(
      'p',
      { class: 'card' },
      disallowed ? `Your saved robots rules disallow every ${type} (${(settings.robots?.disallow ?? ['/']).join(', ')}). ` : `Your saved robots rules do not disallow this type. `,
      named === 0 ? null : `${plural(named, 'agent is', 'agents are')} named in the rules with ${named === 1 ? 'a rule' : 'rules'} of ${named === 1 ? 'its' : 'their'} own (see ${named === 1 ? 'its' : 'their'} pages). `,
      h('a', { href: href(['p', p.id, 'settings']) }, 'Edit the rules'),
    );
    return { children: [overTime, h('div', { class: 'grid' }, outcomes, agents), paths, rules], mountChart: byAgent.total > 0 ? chart.mount : undefined };
  };
  return rangePage(
    main,
    p.id,
    [
      h('p', { class: 'crumbs' }, h('a', { href: href(['p', p.id, 'analytics']) }, 'Analytics')),
      h('h1', {}, type, h('span', { class: 'subtitle' }, 'Agent type')),
      h('p', {}, 'The catalog knows ', h('a', { href: href(['p', p.id, 'agents'], { type }) }, plural(catalogCount, `${type} agent`)), '.'),
    ],
    draw,
  );
};
