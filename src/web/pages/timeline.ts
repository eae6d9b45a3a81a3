// The realtime timeline: the latest visits, then new ones as they arrive over Server-Sent Events,
// with filters by agent type, verification result and agent (kept in the URL), and a pause that
// buffers arrivals. Each row opens the visit's detail; each agent its page.
import { AGENT_TYPES } from '../../catalog/types.js';
import { ApiError, apiUrl, request, type StatsJson, type VisitJson } from '../api.js';
import type { Page } from '../app.js';
import { clientAddressNoticeSlot } from '../client-address-notice.js';
import { field, h, replace, type Child } from '../dom.js';
import { formatCount, formatDateTime, formatTime, referralName, RESULT_LABELS } from '../format.js';
import { zoneLine } from '../range.js';
import { href, updateParams } from '../route-state.js';
import { clippedPath, decisionBadge, resultBadge } from '../view.js';

const MAX_ROWS = 500;

/** A cell whose content is one block; data-label names the column beside it when a narrow window stacks the cells. */
function cell(label: string, className: string, ...children: Child[]): HTMLTableCellElement {
  return h('td', { class: className, 'data-label': label }, h('div', {}, ...children));
}

/**
 * One visit as a timeline row (also used by the agent page): the time and the result badge link
 * to the visit's detail, the agent to its page. The status carries the site's access decision, so
 * a report-only policy shows here what it would have blocked.
 */
export function visitRow(projectId: string, visit: VisitJson, fresh = false): HTMLTableRowElement {
  const detail = href(['p', projectId, 'visits', visit.id]);
  const agent =
    visit.agent_id === null
      ? h('span', { class: 'muted' }, 'Browser or unknown')
      : h('span', {}, h('a', { href: href(['p', projectId, 'agents', visit.agent_id]), class: 'agent-link' }, h('strong', {}, visit.agent_name ?? visit.agent_id)), h('span', { class: 'type' }, visit.agent_type ?? ''));
  return h(
    'tr',
    { class: fresh ? 'fresh' : '', 'data-id': visit.id },
    cell('Time', 'nowrap', h('a', { href: detail, 'aria-label': `Visit at ${formatDateTime(visit.time)}: details` }, h('time', { datetime: visit.time, title: formatDateTime(visit.time) }, formatTime(visit.time)))),
    cell('Agent', 'agent', agent, ' ', resultBadge(visit.result, detail)),
    cell('Path', 'path', clippedPath(visit.request_path, h('span', { class: 'method' }, visit.request_method), ' ')),
    cell('Status', 'num', visit.response_status_code === undefined ? '—' : String(visit.response_status_code), decisionBadge(visit)),
    cell('Client IP', 'mono', visit.client_ip ?? '—'),
    cell('Referral', '', visit.referral === null ? '—' : referralName(visit.referral)),
  );
}

/** The timeline's table; rows go into its body. */
export function visitTable(caption: string, body: HTMLTableSectionElement): HTMLTableElement {
  return h(
    'table',
    { class: 'timeline' },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...['Time', 'Agent', 'Path', 'Status', 'Client IP', 'Referral'].map((label) => h('th', { scope: 'col', class: label === 'Status' ? 'num' : '' }, label)))),
    body,
  );
}

/** Draws the timeline page and keeps its event stream open until the page is left. */
export const renderTimeline: Page = async ({ main, project, route }) => {
  const p = project!;
  const chosen = { type: route.params.get('agent_type') ?? '', result: route.params.get('result') ?? '', agent: route.params.get('agent') ?? '' };
  const typeSelect = h(
    'select',
    {},
    h('option', { value: '' }, 'All types'),
    ...AGENT_TYPES.map((t) => h('option', { value: t, selected: t === chosen.type }, t)),
    h('option', { value: 'none', selected: chosen.type === 'none' }, 'Browsers and unknown'),
  );
  const resultSelect = h('select', {}, h('option', { value: '' }, 'All results'), ...Object.entries(RESULT_LABELS).map(([value, label]) => h('option', { value, selected: value === chosen.result }, label)));
  // The agent filter lists the agents seen lately (filled below); the one in the URL is there from the start.
  const agentSelect = h('select', {}, h('option', { value: '' }, 'All agents'), chosen.agent === '' ? null : h('option', { value: chosen.agent, selected: true }, chosen.agent));
  const pauseButton = h('button', { type: 'button', 'aria-pressed': 'false' }, 'Pause');
  const status = h('p', { class: 'live-status', role: 'status' });
  const body = h('tbody', {});
  const table = visitTable('Visits, the latest to arrive first', body);
  const empty = h('div', { class: 'empty' });
  const olderButton = h('button', { type: 'button' }, 'Load older visits');
  let source: EventSource | undefined;
  let paused = false;
  let buffered: VisitJson[] = [];
  let next: string | null = null;
  let shown = 0;
  let closed = false;

  const filters = () => ({ agent_type: typeSelect.value || undefined, result: resultSelect.value || undefined, agent: agentSelect.value || undefined });
  const setStatus = (text: string, kind: 'live' | 'paused' | 'down') => {
    status.textContent = text;
    status.className = `live-status ${kind}`;
  };
  const showEmpty = () => {
    const filtered = Object.values(filters()).some((v) => v !== undefined);
    empty.hidden = shown > 0;
    table.hidden = shown === 0;
    if (shown > 0) return;
    if (filtered) {
      replace(empty, h('p', {}, 'No visits match these filters yet.'));
      return;
    }
    const send = h('button', { type: 'button', class: 'primary' }, 'Send a test visit');
    send.addEventListener('click', async () => {
      send.disabled = true;
      try {
        await request('POST', '/test-visits', { params: { project: p.id } });
      } finally {
        send.disabled = false;
      }
    });
    replace(empty, h('p', {}, 'No visits yet — send a test visit, or send visits to ', h('code', {}, 'POST /visits'), ' with the project token.'), send);
  };
  const prepend = (visits: readonly VisitJson[]) => {
    for (const visit of visits) {
      if (body.querySelector(`tr[data-id="${CSS.escape(visit.id)}"]`) !== null) continue;
      body.insertBefore(visitRow(p.id, visit, true), body.firstChild);
      shown++;
    }
    while (body.rows.length > MAX_ROWS) {
      body.deleteRow(-1);
      shown--;
    }
    showEmpty();
  };
  let lastId: string | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const connect = (after: string | undefined) => {
    source?.close();
    lastId = after;
    const url = apiUrl('/visits/stream', { project: p.id, ...filters(), last_event_id: after });
    const stream = new EventSource(url, { withCredentials: true });
    source = stream;
    stream.onopen = () => setStatus(paused ? `Paused — ${formatCount(buffered.length)} new` : 'Live: new visits appear as they arrive', paused ? 'paused' : 'live');
    stream.onerror = () => {
      if (closed || source !== stream) return;
      setStatus('Connection lost — reconnecting…', 'down');
      // EventSource retries network errors itself, but gives up on an error status: check the
      // session (a 401 shows the login form), then reconnect from the last visit seen.
      if (stream.readyState === EventSource.CLOSED) {
        request('GET', '/admin/session').then(
          () => {
            retry = setTimeout(() => {
              if (!closed && source === stream) connect(lastId);
            }, 3000);
          },
          () => undefined,
        );
      }
    };
    stream.onmessage = (event: MessageEvent<string>) => {
      if (event.lastEventId !== '') lastId = event.lastEventId;
      const visit = JSON.parse(event.data) as VisitJson;
      if (paused) {
        buffered.push(visit);
        setStatus(`Paused — ${formatCount(buffered.length)} new`, 'paused');
      } else {
        prepend([visit]);
      }
    };
  };
  const load = async () => {
    source?.close();
    body.replaceChildren();
    shown = 0;
    buffered = [];
    const page = await request<{ visits: VisitJson[]; next: string | null }>('GET', '/visits', { params: { project: p.id, limit: 100, ...filters() } });
    for (const visit of page.visits) body.appendChild(visitRow(p.id, visit));
    shown = page.visits.length;
    next = page.next;
    olderButton.hidden = next === null;
    showEmpty();
    if (!closed) connect(page.visits[0]?.id);
  };
  const reload = () => {
    load().catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 401)) setStatus(error instanceof Error ? error.message : String(error), 'down');
    });
  };
  pauseButton.addEventListener('click', () => {
    paused = !paused;
    pauseButton.setAttribute('aria-pressed', String(paused));
    pauseButton.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) {
      prepend(buffered);
      buffered = [];
      setStatus('Live: new visits appear as they arrive', 'live');
    } else {
      setStatus('Paused — 0 new', 'paused');
    }
  });
  olderButton.addEventListener('click', async () => {
    if (next === null) return;
    const page = await request<{ visits: VisitJson[]; next: string | null }>('GET', '/visits', { params: { project: p.id, limit: 100, after: next, ...filters() } });
    for (const visit of page.visits) body.appendChild(visitRow(p.id, visit));
    shown += page.visits.length;
    next = page.next;
    olderButton.hidden = next === null;
    showEmpty();
  });
  for (const select of [typeSelect, resultSelect, agentSelect]) {
    select.addEventListener('change', () => {
      updateParams({ agent_type: typeSelect.value, result: resultSelect.value, agent: agentSelect.value });
      reload();
    });
  }
  // Times are drawn once per row: a zone switch draws the rows again.
  const zone = zoneLine(reload);

  replace(
    main,
    h('h1', {}, `${p.name}: realtime timeline`),
    clientAddressNoticeSlot(p.id),
    h(
      'div',
      { class: 'toolbar card' },
      field('Agent type', typeSelect),
      field('Result', resultSelect),
      field('Agent', agentSelect),
      h('div', { class: 'toolbar-end' }, pauseButton),
    ),
    status,
    zone.element,
    empty,
    h('div', { class: 'table-wrap' }, table),
    olderButton,
  );
  await load();
  // The agent filter lists the agents seen in the last 30 days, most frequent first.
  request<StatsJson>('GET', '/stats', { params: { project: p.id, by: 'agent', interval: 'day', from: new Date(Date.now() - 30 * 86_400_000).toISOString(), limit: 50 } }).then(
    (stats) => {
      for (const s of stats.series) {
        if (s.key === null) continue;
        const label = `${s.agent_name ?? s.key} (${formatCount(s.total)})`;
        const existing = Array.from(agentSelect.options).find((option) => option.value === s.key);
        if (existing !== undefined) existing.textContent = label;
        else agentSelect.appendChild(h('option', { value: s.key }, label));
      }
    },
    () => undefined,
  );
  return () => {
    closed = true;
    if (retry !== undefined) clearTimeout(retry);
    source?.close();
  };
};
