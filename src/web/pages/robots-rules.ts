// The robots.txt rules editor of the settings page: agent types to disallow, agents disallowed or
// allowed by name on top (each with optional paths of its own), the default paths, and a live
// preview of the generated file from POST /robots-txts, with errors shown at the row they name.
import { AGENT_TYPES } from '../../catalog/types.js';
import { parseRobotsTxt } from '../../robots/match.js';
import { ApiError, request, type AgentPageJson, type CatalogAgentJson, type RobotsAgentEntryJson, type RobotsRulesJson, type SettingsJson, type ViolationsJson } from '../api.js';
import { copyText, field, h, replace, uid } from '../dom.js';
import { formatCount, plural } from '../format.js';
import { href } from '../route-state.js';
import { toast } from '../toast.js';

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** Paths typed into one row's box: separated by spaces, commas or lines (a robots path holds none of them unencoded). */
const pathList = (text: string): string[] => text.split(/[\s,]+/).filter((path) => path !== '');

/** One agent named in the rules, as a row of the editor. */
interface AgentRow {
  readonly element: HTMLElement;
  readonly agent: HTMLInputElement;
  readonly action: HTMLSelectElement;
  readonly paths: HTMLInputElement;
  readonly about: HTMLElement;
  readonly problem: HTMLElement;
}

/**
 * Builds the robots rules section for a project with its saved rules.
 * Returns the section and `start`, which draws the first preview, and a cleanup.
 */
export function robotsRulesSection(projectId: string, saved: RobotsRulesJson | null): { element: HTMLElement; start(): void; stop(): void } {
  const params = { project: projectId };
  const chosen = new Set(saved?.agent_types ?? []);
  const boxes = AGENT_TYPES.map((type) => h('input', { type: 'checkbox', name: 'agent_types', value: type, checked: chosen.has(type) }));
  const disallowInput = h('textarea', { rows: 3, spellcheck: 'false' });
  disallowInput.value = (saved?.disallow ?? ['/']).join('\n');
  const allowInput = h('textarea', { rows: 2, spellcheck: 'false' });
  allowInput.value = (saved?.allow ?? []).join('\n');
  const preview = h('pre', { class: 'preview', tabindex: 0, 'aria-label': 'robots.txt preview', 'data-testid': 'robots-preview' });
  const previewInfo = h('p', { class: 'muted small', 'aria-live': 'polite' }, 'Generating the preview…');
  const robotsMessage = h('p', { class: 'error', role: 'alert' });
  // Agents documented not to obey robots.txt (fetchers acting for a user, mostly): when the rules
  // disallow one of them, the owner is told that only an access policy keeps it out.
  const ignoresNote = h('p', { class: 'notice-box small', role: 'note', 'aria-label': 'Agents robots.txt may not stop', hidden: true });
  const ignoringAgents = request<AgentPageJson>('GET', '/agents', { params: { respects_robots_txt: 'false', limit: 200 } }).then(
    (page): readonly CatalogAgentJson[] => page.agents,
    () => [],
  );
  // Named when the file (read by the parser that counts violations) disallows any path to one of its tokens.
  const showIgnoring = (text: string, ignoring: readonly CatalogAgentJson[]) => {
    const robots = parseRobotsTxt(text);
    const named = ignoring.filter((agent) => agent.robots_tokens.some((token) => robots.rulesFor(token).some((rule) => !rule.allow && rule.pattern !== ''))).map((agent) => agent.name);
    ignoresNote.hidden = named.length === 0;
    ignoresNote.textContent =
      named.length === 0
        ? ''
        : `Documented not to obey robots.txt, so these rules may not keep them out: ${named.join(', ')}. An access policy that denies them does (the middleware's denyAgents or denyAgentTypes).`;
  };

  // --- Agents by name ------------------------------------------------------------------------
  const suggestions = h('datalist', { id: uid('agents') });
  const rows: AgentRow[] = [];
  const rowList = h('ol', { class: 'agent-rules', 'aria-label': 'Agents by name' });
  let suggestTimer: ReturnType<typeof setTimeout> | undefined;
  // Suggestions from the catalog as the owner types a name, token or operator.
  const suggest = (text: string) => {
    if (suggestTimer !== undefined) clearTimeout(suggestTimer);
    suggestTimer = setTimeout(async () => {
      if (text.trim().length < 2) return;
      try {
        const page = await request<AgentPageJson>('GET', '/agents', { params: { q: text.trim(), limit: 20 } });
        replace(suggestions, ...page.agents.map((agent) => h('option', { value: agent.robots_tokens[0] ?? agent.id }, `${agent.name} · ${agent.type} · ${agent.operator}`)));
      } catch {
        // Suggestions are a convenience; the preview names an unknown agent anyway.
      }
    }, 200);
  };
  // What the typed agent is, from the catalog: its name, type and operator, or that it is unknown.
  const describeRow = async (row: AgentRow) => {
    const reference = row.agent.value.trim();
    if (reference === '') {
      replace(row.about);
      return;
    }
    try {
      const page = await request<AgentPageJson>('GET', '/agents', { params: { q: reference, limit: 50 } });
      // The owner typed on meanwhile: that change describes the row again.
      if (row.agent.value.trim() !== reference) return;
      const lower = reference.toLowerCase();
      const agent: CatalogAgentJson | undefined = page.agents.find((a) => a.id === lower || a.robots_tokens.some((t) => t.toLowerCase() === lower));
      replace(
        row.about,
        agent === undefined
          ? h('span', { class: 'error' }, 'Not an agent id or robots token of the catalog.')
          : h(
              'span',
              {},
              h('a', { href: href(['agents', agent.id]) }, agent.name),
              ` · ${agent.type} · ${agent.operator}`,
              chosenTypes().includes(agent.type) ? ' · its type is chosen above' : '',
              agent.robots_tokens.length === 0 ? ' · it sends no product token of its own, so robots.txt cannot name it (the middleware can deny it)' : '',
            ),
      );
    } catch {
      replace(row.about);
    }
  };
  const addRow = (entry?: RobotsAgentEntryJson, allowed = false): AgentRow => {
    const rule = typeof entry === 'object' ? entry : undefined;
    const agent = h('input', { type: 'text', value: typeof entry === 'string' ? entry : (rule?.agent ?? ''), list: suggestions.id, autocomplete: 'off', spellcheck: 'false', placeholder: 'GPTBot' });
    const action = h('select', {}, h('option', { value: 'disallow', selected: !allowed }, 'Disallow'), h('option', { value: 'allow', selected: allowed }, 'Allow'));
    const own = allowed ? rule?.allow : rule?.disallow;
    const paths = h('input', { type: 'text', value: (own ?? []).join(' '), autocomplete: 'off', spellcheck: 'false' });
    const about = h('p', { class: 'hint agent-about' });
    const problem = h('p', { class: 'error agent-problem' });
    const remove = h('button', { type: 'button', class: 'small' }, 'Remove');
    const pathsHint = () => {
      paths.placeholder = action.value === 'allow' ? 'everything' : 'the paths above';
    };
    pathsHint();
    const element = h(
      'li',
      { class: 'agent-rule' },
      field('Agent', agent),
      field('Rule', action),
      field(action.value === 'allow' ? 'Allowed paths' : 'Disallowed paths', paths),
      remove,
      about,
      problem,
    );
    const row: AgentRow = { element, agent, action, paths, about, problem };
    const pathsLabel = element.querySelector<HTMLLabelElement>(`label[for="${paths.id}"]`)!;
    action.addEventListener('change', () => {
      pathsLabel.textContent = action.value === 'allow' ? 'Allowed paths' : 'Disallowed paths';
      pathsHint();
    });
    agent.addEventListener('input', () => suggest(agent.value));
    agent.addEventListener('change', () => void describeRow(row));
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      element.remove();
      updatePreview();
      addButton.focus();
    });
    rows.push(row);
    rowList.append(element);
    if (entry !== undefined) void describeRow(row);
    return row;
  };
  const addButton = h('button', { type: 'button', class: 'small' }, 'Add an agent');
  addButton.addEventListener('click', () => addRow().agent.focus());
  for (const entry of saved?.disallow_agents ?? []) addRow(entry, false);
  for (const entry of saved?.allow_agents ?? []) addRow(entry, true);

  const chosenTypes = () => boxes.filter((b) => b.checked).map((b) => b.value);
  /** The options the form describes, and which row each agent entry came from (for errors). */
  const options = () => {
    const disallow = lines(disallowInput.value);
    const allow = lines(allowInput.value);
    const disallowAgents: RobotsAgentEntryJson[] = [];
    const allowAgents: RobotsAgentEntryJson[] = [];
    const rowAt = new Map<string, AgentRow>();
    for (const row of rows) {
      const agent = row.agent.value.trim();
      if (agent === '') continue;
      const own = pathList(row.paths.value);
      const allowed = row.action.value === 'allow';
      const list = allowed ? allowAgents : disallowAgents;
      rowAt.set(`/${allowed ? 'allow_agents' : 'disallow_agents'}/${list.length}`, row);
      list.push(own.length === 0 ? agent : allowed ? { agent, allow: own } : { agent, disallow: own });
    }
    const body: RobotsRulesJson = {
      agent_types: chosenTypes(),
      ...(disallow.length === 0 ? {} : { disallow }),
      ...(allow.length === 0 ? {} : { allow }),
      ...(disallowAgents.length === 0 ? {} : { disallow_agents: disallowAgents }),
      ...(allowAgents.length === 0 ? {} : { allow_agents: allowAgents }),
    };
    return { body, rowAt, empty: body.agent_types.length === 0 && disallowAgents.length === 0 && allowAgents.length === 0 };
  };
  /** Shows each error at the row it names (the rest above the save button). */
  const showErrors = (error: unknown, rowAt: ReadonlyMap<string, AgentRow>) => {
    for (const row of rows) {
      row.problem.textContent = '';
      row.agent.removeAttribute('aria-invalid');
    }
    if (error === undefined) {
      robotsMessage.textContent = '';
      return;
    }
    if (!(error instanceof ApiError)) {
      robotsMessage.textContent = String(error);
      return;
    }
    const rest = [];
    for (const issue of error.errors) {
      const pointer = issue.pointer.replace(/^\/robots/, '');
      const row = rowAt.get(/^\/(dis)?allow_agents\/\d+/.exec(pointer)?.[0] ?? '');
      if (row === undefined) {
        rest.push(`${issue.pointer || '(body)'}: ${issue.message}`);
        continue;
      }
      row.problem.textContent = issue.message;
      if (/\/agent$|agents\/\d+$/.test(pointer)) row.agent.setAttribute('aria-invalid', 'true');
    }
    robotsMessage.textContent = rest.length === 0 ? (error.errors.length === 0 ? error.message : '') : `${error.message} ${rest.join('; ')}`;
  };

  let previewTimer: ReturnType<typeof setTimeout> | undefined;
  let previewSeq = 0;
  const updatePreview = () => {
    if (previewTimer !== undefined) clearTimeout(previewTimer);
    previewTimer = setTimeout(async () => {
      const seq = ++previewSeq;
      const { body, rowAt, empty } = options();
      if (empty) {
        preview.textContent = '';
        showIgnoring('', []);
        previewInfo.textContent = 'Choose an agent type or name an agent to see the generated robots.txt.';
        showErrors(undefined, rowAt);
        return;
      }
      try {
        const text = await request<string>('POST', '/robots-txts', { params, body, text: true });
        const ignoring = await ignoringAgents;
        if (seq !== previewSeq) return;
        preview.textContent = text;
        showIgnoring(text, ignoring);
        const groups = (text.match(/^User-agent:/gm) ?? []).length;
        previewInfo.textContent = `${plural(groups, 'user-agent line')}, ${formatCount(new TextEncoder().encode(text).length)} bytes.`;
        showErrors(undefined, rowAt);
      } catch (error) {
        if (seq !== previewSeq) return;
        showErrors(error, rowAt);
      }
    }, 200);
  };

  const typeList = h(
    'fieldset',
    { class: 'types' },
    h('legend', {}, 'Agent types to disallow'),
    h(
      'div',
      { class: 'checks' },
      ...boxes.map((box, i) => {
        box.id = `type-${i}`;
        return h('label', { for: box.id, class: 'check' }, box, ` ${AGENT_TYPES[i]!}`);
      }),
    ),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', class: 'small', onclick: () => { for (const b of boxes) b.checked = /^AI |Undocumented AI/.test(b.value); updatePreview(); } }, 'Choose AI types'),
      h('button', { type: 'button', class: 'small', onclick: () => { for (const b of boxes) b.checked = false; updatePreview(); } }, 'Clear'),
    ),
  );
  const agentList = h(
    'fieldset',
    { class: 'types agents-by-name' },
    h('legend', {}, 'Agents by name'),
    h(
      'p',
      { class: 'hint' },
      'On top of the types: disallow an agent whose type is not chosen, or allow one whose type is (for example every AI Data Scraper but one). ',
      'Without paths of its own, a disallowed agent gets the paths above and an allowed one may fetch everything; with paths, an allowed agent gets them as exceptions to its type’s rules.',
    ),
    rowList,
    suggestions,
    addButton,
  );
  const robotsForm = h(
    'form',
    {
      oninput: () => updatePreview(),
      onchange: () => updatePreview(),
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const { body, rowAt, empty } = options();
        try {
          await request('PUT', '/project-settings', { params, body: { robots: empty ? null : body } });
          showErrors(undefined, rowAt);
          toast(empty ? 'Robots rules cleared.' : 'Robots rules saved; violations are counted against them.');
        } catch (error) {
          showErrors(error, rowAt);
        }
      },
    },
    typeList,
    h('div', { class: 'two' }, field('Disallow paths (one per line)', disallowInput), field('Allow paths (one per line)', allowInput)),
    agentList,
    robotsMessage,
    h('button', { type: 'submit' }, 'Save robots rules'),
  );
  const copyButton = h('button', { type: 'button', onclick: async () => toast((await copyText(preview.textContent ?? '', preview)) ? 'robots.txt copied.' : 'Select the text and copy it.') }, 'Copy robots.txt');
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'robots-title' },
    h('h2', { id: 'robots-title' }, 'robots.txt rules'),
    h('p', {}, 'Choose the kinds of agents to keep out, and single agents by name. The saved rules also define what counts as a robots.txt violation in the analytics.'),
    h('div', { class: 'robots' }, robotsForm, h('div', { class: 'preview-box' }, h('h3', {}, 'Preview'), previewInfo, preview, ignoresNote, copyButton)),
  );
  return {
    element,
    start: updatePreview,
    stop() {
      if (previewTimer !== undefined) clearTimeout(previewTimer);
      if (suggestTimer !== undefined) clearTimeout(suggestTimer);
      previewSeq++;
    },
  };
}

/**
 * A button on an agent's page that names the agent in the saved rules in one step: allow it when
 * its type is disallowed (every AI Data Scraper but this one), disallow it when nothing covers it,
 * or take back a rule that names it. `done` redraws the page.
 */
export function agentRuleButton(projectId: string, agentId: string, agentName: string, rule: ViolationsJson['agent_rule'], done: () => void): HTMLElement {
  const source = rule?.source;
  const [label, list, add] =
    source === 'allow_agents'
      ? [`Stop allowing ${agentName} by name`, 'allow_agents', false]
      : source === 'disallow_agents'
        ? [`Stop disallowing ${agentName} by name`, 'disallow_agents', false]
        : source === 'agent_types'
          ? [`Allow ${agentName} by name`, 'allow_agents', true]
          : [`Disallow ${agentName} by name`, 'disallow_agents', true];
  const button = h('button', { type: 'button', class: 'small' }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const params = { project: projectId };
      const robots: RobotsRulesJson = (await request<SettingsJson>('GET', '/project-settings', { params })).robots ?? { agent_types: [] };
      const others = (robots[list as 'allow_agents'] ?? []).filter((entry) => (typeof entry === 'string' ? entry : entry.agent) !== agentId);
      const next: RobotsRulesJson = { ...robots, [list]: add ? [...others, agentId] : others };
      if (next[list as 'allow_agents']!.length === 0) delete next[list as 'allow_agents'];
      const empty = next.agent_types.length === 0 && next.disallow_agents === undefined && next.allow_agents === undefined;
      await request('PUT', '/project-settings', { params, body: { robots: empty ? null : next } });
      toast(add ? `${agentName} is ${list === 'allow_agents' ? 'allowed' : 'disallowed'} by name; the robots.txt says so.` : `The rule naming ${agentName} is gone.`);
      done();
    } catch (error) {
      toast(error instanceof ApiError ? error.message : String(error), 'error');
      button.disabled = false;
    }
  });
  return button;
}
