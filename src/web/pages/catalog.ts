// The agent catalog browser: search by name, token or operator, filter by type and verification
// method (kept in the URL); each agent with its operator, documentation, robots tokens and the
// methods that can verify it. Inside a project, agents link to their pages there, and the list can
// be narrowed to the agents seen on the site in the last 30 days, with their visits.
import { AGENT_TYPES } from '../../catalog/types.js';
import { request, type AgentPageJson, type CatalogAgentJson, type ProjectInfo, type StatsJson } from '../api.js';
import type { Page } from '../app.js';
import { field, h, replace, setTitle, type Child } from '../dom.js';
import { formatCount, METHOD_LABELS, plural } from '../format.js';
import { currentParams, href, updateParams } from '../route-state.js';
import { dataTable, empty } from '../view.js';

const PAGE_SIZE = 50;
// "Seen on this site" looks this far back, and lists at most as many agents as /stats reports.
const SEEN_DAYS = 30;
const SEEN_LIMIT = 1000;

/** The methods that can verify an agent, as chips; "None" said plainly. */
export function methodChips(methods: readonly string[]): HTMLElement {
  if (methods.length === 0) return h('span', { class: 'muted', title: 'Nothing can prove a visit came from it: anyone can send its user agent.' }, 'None');
  return h('span', { class: 'chips' }, ...methods.map((method) => h('span', { class: 'chip' }, METHOD_LABELS[method] ?? method)));
}

/** A catalog agent's facts: type, operator, documentation, tokens, verification, robots.txt. */
export function agentFacts(agent: CatalogAgentJson, typeHref?: string): HTMLElement {
  const row = (term: string, ...description: Child[]) => [h('dt', {}, term), h('dd', {}, ...description)];
  return h(
    'dl',
    { class: 'facts' },
    ...row('Type', typeHref === undefined ? agent.type : h('a', { href: typeHref }, agent.type)),
    ...row('Operator', agent.operator),
    // An unlisted agent (a bot the catalog does not list, named by its own token) has no page.
    ...row('Documentation', agent.url === '' ? h('span', { class: 'muted' }, 'None: not in the catalog, named by the token it sends') : h('a', { href: agent.url, rel: 'noopener noreferrer', target: '_blank', class: 'url' }, agent.url)),
    ...row(
      'Robots tokens',
      agent.robots_tokens.length === 0
        ? h('span', { class: 'muted' }, 'None: an attack payload, not a product robots.txt can address')
        : h('span', { class: 'chips' }, ...agent.robots_tokens.map((token) => h('code', { class: 'chip' }, token))),
    ),
    ...row('Verification', agent.verification_methods.length === 0 ? h('span', { class: 'muted' }, 'None: nothing can prove a visit came from it, so anyone can send its user agent') : methodChips(agent.verification_methods)),
    ...(agent.signature_agents.length === 0 ? [] : row('Signs as', ...agent.signature_agents.map((origin) => h('code', { class: 'chip' }, origin)))),
    ...(agent.reverse_dns.length === 0 ? [] : row('Reverse DNS', ...agent.reverse_dns.map((suffix) => h('code', { class: 'chip' }, suffix)))),
    ...row('Obeys robots.txt', agent.respects_robots_txt === null ? h('span', { class: 'muted' }, 'Not documented') : agent.respects_robots_txt ? 'Yes, as documented' : 'No, as documented'),
    ...(agent.description === null ? [] : row('About', agent.description)),
  );
}

/** Draws the catalog browser (global, or inside a project). */
export const renderCatalog: Page = async ({ main, project }) => {
  const params = currentParams();
  const agentHref = (id: string) => (project === undefined ? href(['agents', id], {}, false) : href(['p', project.id, 'agents', id]));
  const search = h('input', { type: 'search', value: params.get('q') ?? '', placeholder: 'GPTBot, OpenAI, CCBot…', autocomplete: 'off', spellcheck: 'false' });
  const typeSelect = h('select', {}, h('option', { value: '' }, 'All types'), ...AGENT_TYPES.map((type) => h('option', { value: type, selected: type === params.get('type') }, type)));
  const methodSelect = h(
    'select',
    {},
    h('option', { value: '' }, 'Any or none'),
    ...Object.entries(METHOD_LABELS).map(([value, label]) => h('option', { value, selected: value === params.get('verification') }, label)),
  );
  // Inside a project: the whole catalog, or only the agents that visited the site lately.
  const showSelect =
    project === undefined
      ? undefined
      : h('select', {}, h('option', { value: '' }, 'Every agent in the catalog'), h('option', { value: 'seen', selected: params.get('show') === 'seen' }, `Seen on this site (last ${SEEN_DAYS} days)`));
  const methodField = field('Can be verified by', methodSelect);
  const count = h('p', { class: 'muted', role: 'status' });
  const results = h('div', {});
  const more = h('button', { type: 'button' }, 'Show more agents');
  more.hidden = true;
  let shown: CatalogAgentJson[] = [];
  let next: number | null = null;
  let seq = 0;

  const query = () => ({ q: search.value.trim(), type: typeSelect.value, verification: methodSelect.value });
  const seenOnly = () => showSelect?.value === 'seen';

  /** The agents seen on the site in the last SEEN_DAYS days, most visits first, filtered here by name and type. */
  const drawSeen = async (mine: number) => {
    const to = Date.now();
    const seen = await request<StatsJson>('GET', '/stats', {
      params: { project: project!.id, by: 'agent', interval: 'day', from: new Date(to - SEEN_DAYS * 86_400_000).toISOString(), to: new Date(to).toISOString(), limit: SEEN_LIMIT },
    });
    if (mine !== seq) return;
    const q = query();
    const needle = q.q.toLowerCase();
    const rows = seen.series.filter(
      (s) => s.key !== null && (q.type === '' || s.agent_type === q.type) && (needle === '' || s.key.toLowerCase().includes(needle) || (s.agent_name ?? '').toLowerCase().includes(needle)),
    );
    const filtered = q.q !== '' || q.type !== '';
    count.textContent = `${plural(rows.length, 'agent')} ${filtered ? (rows.length === 1 ? 'matches' : 'match') + ' among those seen' : 'seen'} on this site in the last ${SEEN_DAYS} days${seen.other > 0 ? ` (the ${formatCount(SEEN_LIMIT)} with the most visits)` : ''}.`;
    replace(
      results,
      rows.length === 0
        ? empty(filtered ? 'No agent seen on this site matches.' : `No agent visited this site in the last ${SEEN_DAYS} days.`)
        : dataTable(
            'Agents seen on this site',
            [
              { label: 'Agent', cell: (s) => h('span', {}, h('a', { href: agentHref(s.key!) }, h('strong', {}, s.agent_name ?? s.key!)), s.agent_type === null || s.agent_type === undefined ? null : h('span', { class: 'type' }, s.agent_type)) },
              { label: `Visits (${SEEN_DAYS} days)`, numeric: true, cell: (s) => formatCount(s.total) },
            ],
            rows,
            { stack: true, className: 'catalog seen' },
          ),
    );
    more.hidden = true;
  };
  const drawResults = (total: number) => {
    const q = query();
    const filtered = q.q !== '' || q.type !== '' || q.verification !== '';
    count.textContent = filtered ? `${plural(total, 'agent')} ${total === 1 ? 'matches' : 'match'}.` : `${plural(total, 'agent')} in the catalog.`;
    replace(
      results,
      shown.length === 0
        ? empty('No agent matches. Try a shorter name, or a robots token such as GPTBot.')
        : dataTable(
            'Agents',
            [
              { label: 'Agent', cell: (a) => h('span', {}, h('a', { href: agentHref(a.id) }, h('strong', {}, a.name)), h('span', { class: 'type' }, a.type)) },
              { label: 'Operator', cell: (a) => a.operator },
              { label: 'Robots tokens', cell: (a) => h('span', { class: 'chips' }, ...a.robots_tokens.map((token) => h('code', { class: 'chip' }, token))) },
              { label: 'Verification', cell: (a) => methodChips(a.verification_methods) },
              { label: 'Docs', cell: (a) => h('a', { href: a.url, rel: 'noopener noreferrer', target: '_blank', 'aria-label': `${a.name} documentation` }, 'Docs') },
            ],
            shown,
            { stack: true, className: 'catalog' },
          ),
    );
    more.hidden = next === null;
  };
  const load = async (append: boolean) => {
    const mine = ++seq;
    // The verification methods are the catalog's: in the seen list they do not apply.
    methodField.hidden = seenOnly();
    if (seenOnly()) return drawSeen(mine);
    const q = query();
    const page = await request<AgentPageJson>('GET', '/agents', { params: { ...q, limit: PAGE_SIZE, offset: append ? (next ?? 0) : 0 } });
    if (mine !== seq) return;
    shown = append ? [...shown, ...page.agents] : [...page.agents];
    next = page.next_offset;
    drawResults(page.total);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const changed = () => {
    const q = query();
    updateParams({ q: q.q, type: q.type, verification: q.verification, show: showSelect?.value === 'seen' ? 'seen' : undefined });
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => void load(false), 200);
  };
  search.addEventListener('input', changed);
  typeSelect.addEventListener('change', changed);
  methodSelect.addEventListener('change', changed);
  showSelect?.addEventListener('change', changed);
  more.addEventListener('click', () => void load(true));

  replace(
    main,
    h('h1', {}, project === undefined ? 'Agent catalog' : `${project.name}: agents`),
    h(
      'p',
      { class: 'muted' },
      'Every agent agentwarden recognises: who runs it, where it is documented, the tokens robots.txt rules name it by, and how a visit can be proven to come from it.',
      project === undefined ? null : ' Open an agent to see what it did on this site.',
    ),
    h('form', { class: 'toolbar card', role: 'search', onsubmit: (event: Event) => event.preventDefault() }, ...(showSelect === undefined ? [] : [field('Show', showSelect)]), field('Name, token or operator', search), field('Type', typeSelect), methodField),
    count,
    results,
    more,
  );
  await load(false);
  return () => {
    seq++;
    if (timer !== undefined) clearTimeout(timer);
  };
};

/** Draws one catalog agent outside a project, with links to its pages in each project. */
export const renderCatalogAgent: Page = async ({ main, route }) => {
  const id = route.segments[0]!;
  const agent = await request<CatalogAgentJson>('GET', `/agents/${encodeURIComponent(id)}`).catch(() => undefined);
  if (agent === undefined) {
    replace(main, h('h1', {}, 'No such agent'), h('p', {}, 'The catalog has no agent with this id. ', h('a', { href: '#/agents' }, 'Search the catalog')));
    return;
  }
  setTitle(agent.name, 'Agents');
  const { projects } = await request<{ projects: ProjectInfo[] }>('GET', '/admin/projects');
  replace(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/agents' }, 'Agent catalog')),
    h('h1', {}, agent.name),
    h('section', { class: 'card', 'aria-labelledby': 'facts-title' }, h('h2', { id: 'facts-title' }, 'About this agent'), agentFacts(agent)),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'in-projects-title' },
      h('h2', { id: 'in-projects-title' }, 'Its visits'),
      projects.length === 0
        ? empty('No projects yet.')
        : h('ul', { class: 'plain-list' }, ...projects.map((p) => h('li', {}, h('a', { href: href(['p', p.id, 'agents', agent.id], {}, false) }, `${agent.name} on ${p.name}`)))),
    ),
    h('p', { class: 'muted small' }, 'Catalog id ', h('code', {}, agent.id)),
  );
};
