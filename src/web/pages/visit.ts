// One visit in full: who sent it and whether that is true (every verification check with its
// reason), the request and response, where the client address came from, the referral and the
// site's own access decision. Reached from any timeline or table row.
import { ApiError, request, type CatalogAgentJson, type CheckJson, type VisitJson } from '../api.js';
import type { Page } from '../app.js';
import { h, replace, setTitle, visibleText, type Child } from '../dom.js';
import { formatDateTime, formatDuration, METHOD_LABELS, OUTCOME_LABELS, reasonText, referralName, shownTimeZone } from '../format.js';
import { zoneLine } from '../range.js';
import { href } from '../route-state.js';
import { collapsible, dataTable, policyRuleName, resultBadge } from '../view.js';

// Fields drawn in their own sections; anything else a client sent is listed under "Other fields".
const SHOWN = new Set([
  'id',
  'time',
  'received',
  'created',
  'agent_id',
  'agent_name',
  'agent_type',
  'result',
  'client_ip',
  'client_ip_header',
  'referral',
  'request_method',
  'request_path',
  'request_headers',
  'response_status_code',
  'response_headers',
  'response_duration_in_milliseconds',
  'verification',
  'decision',
  'is_blocked',
]);

/** A term and its description, for the summary lists. */
function item(term: string, ...description: Child[]): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, ...description)];
}

function section(title: string, id: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

function headerTable(caption: string, headers: Readonly<Record<string, string>> | undefined): HTMLElement {
  const rows = Object.entries(headers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (rows.length === 0) return h('p', { class: 'muted' }, 'None recorded.');
  return dataTable(caption, [{ label: 'Name', cell: ([name]) => h('code', {}, name) }, { label: 'Value', cell: ([, value]) => collapsible('header-value', value) }], rows, { stack: true, className: 'headers' });
}

const OUTCOME_CLASS: Record<string, string> = { pass: 'result-verified', fail: 'result-verification_failed', inconclusive: 'result-not_verifiable' };

function checkItem(check: CheckJson, decided: boolean): HTMLElement {
  return h(
    'li',
    { class: `check-item${decided ? ' decided' : ''}` },
    h('div', { class: 'check-head' }, h('strong', {}, METHOD_LABELS[check.method] ?? check.method), ' ', h('span', { class: `badge ${OUTCOME_CLASS[check.outcome] ?? ''}` }, OUTCOME_LABELS[check.outcome] ?? check.outcome), decided ? h('span', { class: 'muted small' }, ' — this check decided') : null),
    h('p', {}, reasonText(check.reason), ' ', h('code', { class: 'reason' }, check.reason)),
  );
}

/** Why the visit has its result: the checks, or an honest word on why there are none. */
function verificationSection(visit: VisitJson, agent: CatalogAgentJson | undefined): HTMLElement {
  const checks = visit.verification?.checks ?? [];
  let body: Child[];
  if (visit.agent_id === null) {
    body = [h('p', {}, 'No catalog agent claimed this request (a browser, or an agent the catalog does not know), so there was nothing to verify.')];
  } else if (checks.length === 0) {
    const methods = agent?.verification_methods ?? [];
    body = [
      h(
        'p',
        {},
        'Nothing could be checked. ',
        methods.length === 0
          ? `The catalog gives no way to verify ${visit.agent_name ?? visit.agent_id} (no Web Bot Auth origin, published IP ranges or reverse DNS domain), so anyone can send its user agent.`
          : `No verification method ran for this visit (it may have been recorded before checks were stored, or the server runs without ${methods.map((m) => METHOD_LABELS[m] ?? m).join(', ')}).`,
      ),
    ];
  } else {
    const decidedBy = visit.verification?.method ?? null;
    body = [
      h(
        'p',
        {},
        decidedBy === null
          ? 'No check could confirm or refute the claimed identity, so the visit is not verifiable. Checks made, in order:'
          : `Decided by ${METHOD_LABELS[decidedBy] ?? decidedBy}. Checks made, in order (the first to pass or fail decides):`,
      ),
      h('ol', { class: 'checks-list' }, ...checks.map((check, i) => checkItem(check, decidedBy !== null && i === checks.length - 1))),
    ];
  }
  return section('Verification', 'verification-title', h('p', {}, resultBadge(visit.result)), ...body);
}

/** Draws one visit. */
export const renderVisit: Page = async ({ main, project, route }) => {
  const p = project!;
  const id = route.segments[0]!;
  let visit: VisitJson;
  try {
    visit = await request<VisitJson>('GET', `/visits/${encodeURIComponent(id)}`, { params: { project: p.id } });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      replace(main, h('h1', {}, 'No such visit'), h('p', {}, 'This project has no visit with this id (raw visits are deleted after the retention period). ', h('a', { href: href(['p', p.id, 'timeline']) }, 'Back to the timeline')));
      return;
    }
    throw error;
  }
  const agent = visit.agent_id === null ? undefined : await request<CatalogAgentJson>('GET', `/agents/${encodeURIComponent(visit.agent_id)}`).catch(() => undefined);
  // A path may be 16,384 characters: the tab title keeps its start.
  const shownPath = visibleText(visit.request_path);
  setTitle(`Visit ${visit.request_method} ${shownPath.length > 80 ? `${shownPath.slice(0, 79)}…` : shownPath}`, p.name);

  const draw = () => {
    const agentLink = visit.agent_id === null ? h('span', { class: 'muted' }, 'Browser or unknown agent') : h('a', { href: href(['p', p.id, 'agents', visit.agent_id]) }, visit.agent_name ?? visit.agent_id);
    const summary = h(
      'dl',
      { class: 'facts' },
      ...item('When', h('time', { datetime: visit.time }, formatDateTime(visit.time)), h('span', { class: 'muted small' }, ` (${shownTimeZone()})`)),
      ...(visit.received !== visit.time ? item('Received', formatDateTime(visit.received)) : []),
      ...item('Agent', agentLink, ' ', resultBadge(visit.result)),
      ...(visit.agent_type === null ? [] : item('Type', h('a', { href: href(['p', p.id, 'types', visit.agent_type]) }, visit.agent_type))),
      // An unlisted agent has no url (''): a link to it would open the dashboard itself.
      ...(agent === undefined ? [] : item('Operator', agent.operator, ...(agent.url === '' ? [] : [' · ', h('a', { href: agent.url, rel: 'noopener noreferrer', target: '_blank' }, 'documentation')]))),
      ...item('Request', collapsible('path', h('span', { class: 'method' }, visit.request_method), ' ', visit.request_path)),
      ...item('Response', visit.response_status_code === undefined ? 'No status recorded' : String(visit.response_status_code), visit.response_duration_in_milliseconds === undefined ? null : ` in ${formatDuration(visit.response_duration_in_milliseconds)}`),
      ...item(
        'Client address',
        visit.client_ip === null ? h('span', { class: 'muted' }, 'None found in the headers') : h('span', { class: 'mono' }, visit.client_ip),
        visit.client_ip_header === undefined ? null : h('span', { class: 'muted' }, ' from the ', h('code', {}, visit.client_ip_header), ' header'),
      ),
      ...item('Referral', visit.referral === null ? h('span', { class: 'muted' }, visit.agent_id === null ? 'Not from an AI product' : 'Not counted for agents') : `A visitor sent by ${referralName(visit.referral)}`),
    );
    const decision = visit.decision ?? (visit.is_blocked === undefined ? undefined : null);
    const policy =
      decision === undefined
        ? null
        : section(
            'Access policy',
            'policy-title',
            decision === null
              ? h('p', {}, visit.is_blocked === true ? 'The site reports it blocked this visit (answered 403).' : 'The site reports it did not block this visit.')
              : h(
                  'dl',
                  { class: 'facts' },
                  ...item(
                    'Decision',
                    decision.action === 'deny' ? 'Deny' : decision.action === 'allow' ? 'Allow' : String(decision.action ?? '—'),
                    decision.report_only === true ? ' — report only: recorded, not enforced' : '',
                  ),
                  ...(decision.rule === undefined ? [] : item('Rule', policyRuleName(String(decision.rule)), ' ', h('code', { class: 'reason' }, String(decision.rule)))),
                  ...(visit.is_blocked === undefined ? [] : item('Blocked', visit.is_blocked ? 'Yes: the site refused the request' : 'No: the request went through')),
                ),
          );
    const others = Object.entries(visit).filter(([key, value]) => !SHOWN.has(key) && value !== undefined);
    replace(
      main,
      h(
        'p',
        { class: 'crumbs' },
        h('a', { href: href(['p', p.id, 'timeline']) }, 'Timeline'),
        ...(visit.agent_id === null ? [] : [' · ', h('a', { href: href(['p', p.id, 'timeline'], { agent: visit.agent_id }) }, `More visits by ${visit.agent_name ?? visit.agent_id}`)]),
      ),
      h('h1', {}, 'Visit ', h('span', { class: 'path clip' }, `${visit.request_method} ${visit.request_path}`)),
      zone.element,
      section('Summary', 'summary-title', summary),
      verificationSection(visit, agent),
      policy,
      section('Request headers', 'request-headers-title', h('p', { class: 'muted small' }, 'Secret headers (authorization, cookies, tokens, API keys) were removed before the visit was stored.'), headerTable('Request headers', visit.request_headers)),
      section('Response headers', 'response-headers-title', headerTable('Response headers', visit.response_headers)),
      others.length === 0 ? null : section('Other fields', 'other-title', h('pre', { class: 'json', tabindex: 0 }, JSON.stringify(Object.fromEntries(others), null, 2))),
      h('p', { class: 'muted small' }, 'Visit id ', h('code', {}, visit.id)),
    );
  };
  const zone = zoneLine(draw);
  draw();
};
