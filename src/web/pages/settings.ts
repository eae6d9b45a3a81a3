// A project's settings: its access tokens (a new one revealed once, then only a masked prefix),
// rotation and revocation, "send a test visit", the client-IP rule, the site's hosts and the
// robots.txt rules with a live preview of the generated file (robots-rules.ts).
import { ApiError, apiUrl, errorText, request, type SettingsJson, type TokenInfo } from '../api.js';
import type { Page } from '../app.js';
import { copyText, field, h, replace, type Child } from '../dom.js';
import { connectSection } from './connect-snippet.js';
import { formatDateTime, formatDay } from '../format.js';
import { revealOnce, takeRevealed } from '../reveal.js';
import { toast } from '../toast.js';
import { robotsRulesSection } from './robots-rules.js';
import { alertsSection } from './settings-alerts.js';


/** The items of a comma-separated field, trimmed, blanks left out. */
function commaSeparated(text: string): string[] {
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

function section(title: string, id: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

/** Draws the settings page of a project. */
export const renderSettings: Page = async ({ main, project, refresh }) => {
  const p = project!;
  const params = { project: p.id };
  let settings: SettingsJson | undefined;
  let settingsError: string | undefined;
  try {
    settings = await request<SettingsJson>('GET', '/project-settings', { params });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw error;
    settingsError = errorText(error);
  }

  // --- Access tokens -------------------------------------------------------------------------
  const revealed = takeRevealed(p.id);
  const tokenCode = revealed === undefined ? undefined : h('code', { class: 'token', 'data-testid': 'revealed-token' }, revealed);
  const reveal =
    revealed === undefined || tokenCode === undefined
      ? null
      : h(
          'div',
          { class: 'reveal', role: 'alert' },
          h('p', {}, h('strong', {}, 'New access token — copy it now. '), 'It is shown only this once; afterwards only its first characters are.'),
          h(
            'div',
            { class: 'row' },
            tokenCode,
            h('button', { type: 'button', onclick: async () => toast((await copyText(revealed, tokenCode)) ? 'Token copied.' : 'Select the token and copy it.') }, 'Copy token'),
          ),
        );
  const live = p.tokens.filter((t) => t.revoked === null);
  const revoke = async (token: TokenInfo) => {
    if (!window.confirm(`Revoke the token ${token.prefix}…? Clients using it get 401 at once.`)) return;
    try {
      await request('POST', '/admin/token-revocations', { body: { token_id: token.id } });
      toast('Token revoked.');
      refresh();
    } catch (error) {
      toast(errorText(error), 'error');
    }
  };
  const issue = async (revokeOthers: boolean) => {
    if (revokeOthers && live.length > 0 && !window.confirm('Rotate the access token? The current token stops working at once.')) return;
    try {
      const issued = await request<{ token: string }>('POST', '/admin/tokens', { body: { project: p.id, revoke_others: revokeOthers } });
      revealOnce(p.id, issued.token);
      refresh();
    } catch (error) {
      toast(errorText(error), 'error');
    }
  };
  const tokenRows = p.tokens
    .slice()
    .reverse()
    .map((token) =>
      h(
        'tr',
        { class: token.revoked === null ? '' : 'revoked' },
        h('td', { class: 'mono', 'data-label': 'Token' }, `${token.prefix}${'•'.repeat(12)}`),
        h('td', { 'data-label': 'Created' }, formatDay(token.created)),
        h('td', { 'data-label': 'State' }, token.revoked === null ? h('span', { class: 'badge ok' }, 'Live') : h('span', { class: 'badge muted-badge', title: formatDateTime(token.revoked) }, `Revoked ${formatDay(token.revoked)}`)),
        h('td', { 'data-label': '' }, token.revoked === null ? h('button', { type: 'button', class: 'danger small', onclick: () => void revoke(token), 'aria-label': `Revoke token ${token.prefix}` }, 'Revoke') : null),
      ),
    );
  const tokens = section(
    'Access token',
    'tokens-title',
    reveal,
    h('p', {}, 'Clients send it as ', h('code', {}, 'Authorization: Bearer <token>'), ' to ', h('code', {}, apiUrl('/')), ' (for example from a Known Agents SDK pointed at this server).'),
    p.tokens.length === 0
      ? h('p', { class: 'empty' }, 'This project has no tokens.')
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'stack tokens' },
            h('caption', { class: 'visually-hidden' }, 'Tokens'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Token'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
            h('tbody', {}, ...tokenRows),
          ),
        ),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', class: 'primary', onclick: () => void issue(true) }, live.length === 0 ? 'Issue a token' : 'Rotate token'),
      live.length === 0 ? null : h('button', { type: 'button', onclick: () => void issue(false) }, live.length === 1 ? 'Add a second token' : 'Add another token'),
    ),
  );

  // --- Test visit ----------------------------------------------------------------------------
  const testResult = h('p', { role: 'status', class: 'muted' });
  const testButton = h('button', { type: 'button', class: 'primary' }, 'Send a test visit');
  testButton.addEventListener('click', async () => {
    testButton.disabled = true;
    try {
      const visit = await request<{ id: string; agent_name: string | null; result: string }>('POST', '/test-visits', { params });
      replace(testResult, `Test visit recorded (${visit.agent_name ?? 'agent'}). `, h('a', { href: `#/p/${encodeURIComponent(p.id)}/timeline` }, 'See it on the timeline'));
    } catch (error) {
      testResult.textContent = errorText(error);
    } finally {
      testButton.disabled = false;
    }
  });
  // The newest live token's prefix names the token to paste when it is no longer shown.
  const newest = [...live].sort((a, b) => b.created.localeCompare(a.created))[0];
  const connect = connectSection(apiUrl('/').replace(/\/$/, ''), revealed, newest?.prefix);
  const test = section('Send a test visit', 'test-title', h('p', {}, "Records a visit by agentwarden's own test agent, so you can watch it arrive on the timeline and in the charts."), testButton, testResult);

  if (settings === undefined) {
    replace(main, h('h1', {}, `${p.name}: settings`), tokens, connect, test, h('section', { class: 'card' }, h('h2', {}, 'Client IP, site hosts and robots rules'), h('p', { class: 'error' }, `The settings cannot be loaded: ${settingsError ?? 'unknown error'}`)));
    return;
  }
  const saved = settings;

  // --- Client IP -----------------------------------------------------------------------------
  const savedProxies = saved.client_ip.trusted_proxies;
  // "none" stands for the empty list: no header is trusted (an empty field is the server default).
  const savedHeaders = saved.client_ip.headers;
  const headersInput = h('input', { type: 'text', value: savedHeaders === undefined ? '' : savedHeaders.length === 0 ? 'none' : savedHeaders.join(', '), placeholder: 'server default', autocomplete: 'off', spellcheck: 'false' });
  const proxiesInput = h('input', {
    type: 'text',
    value: savedProxies === undefined ? '' : typeof savedProxies === 'number' ? String(savedProxies) : savedProxies.join(', '),
    placeholder: '0',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const ipMessage = h('p', { class: 'error', role: 'alert' });
  const clientIp = section(
    'Client IP',
    'ip-title',
    h('p', {}, 'Which request headers carry the visitor address, and which proxies in front of the site are trusted to append to them. IP-range verification uses this address.'),
    h(
      'form',
      {
        onsubmit: async (event: Event) => {
          event.preventDefault();
          ipMessage.textContent = '';
          const proxies = proxiesInput.value.trim();
          const named = commaSeparated(headersInput.value);
          const headers = named.length === 1 && named[0]!.toLowerCase() === 'none' ? [] : named;
          // Empty fields leave the member out: the server's default applies.
          const clientIpBody = {
            ...(named.length === 0 ? {} : { headers }),
            ...(proxies === '' ? {} : { trusted_proxies: /^\d+$/.test(proxies) ? Number(proxies) : commaSeparated(proxies) }),
          };
          try {
            await request('PUT', '/project-settings', { params, body: { client_ip: clientIpBody } });
            toast('Client IP settings saved.');
          } catch (error) {
            ipMessage.textContent = errorText(error);
          }
        },
      },
      field('Headers, in order', headersInput, 'Comma-separated, e.g. cf-connecting-ip, x-forwarded-for; none when no proxy stands in front of the site, so its visitors write these headers themselves (visits then have an address only when sent with client_ip).'),
      field('Trusted proxies', proxiesInput, 'A number of X-Forwarded-For hops added by your own proxies, or a comma-separated CIDR list ("cloudflare" stands for Cloudflare\'s published ranges).'),
      ipMessage,
      h('button', { type: 'submit' }, 'Save client IP settings'),
    ),
  );

  // --- Site hosts ----------------------------------------------------------------------------
  const hostsInput = h('input', { type: 'text', value: saved.site_hosts.join(', '), placeholder: 'any host', autocomplete: 'off', spellcheck: 'false' });
  const hostsMessage = h('p', { class: 'error', role: 'alert' });
  const siteHosts = section(
    'Site hosts',
    'hosts-title',
    h(
      'p',
      {},
      'The hosts your site answers on. A signed request (Web Bot Auth) is verified only when it was signed for one of them: a crawler signature made for another site and replayed here fails. Empty: any host.',
    ),
    h(
      'form',
      {
        onsubmit: async (event: Event) => {
          event.preventDefault();
          hostsMessage.textContent = '';
          const hosts = commaSeparated(hostsInput.value);
          try {
            const stored = await request<SettingsJson>('PUT', '/project-settings', { params, body: { site_hosts: hosts } });
            // Shown as saved: lower-case, without the default port, each once.
            hostsInput.value = stored.site_hosts.join(', ');
            toast('Site hosts saved.');
          } catch (error) {
            hostsMessage.textContent = errorText(error);
          }
        },
      },
      field('Hosts', hostsInput, 'Comma-separated, e.g. example.com, www.example.com, example.com:8443.'),
      hostsMessage,
      h('button', { type: 'submit' }, 'Save site hosts'),
    ),
  );

  // --- Robots rules (robots-rules.ts) --------------------------------------------------------
  const robots = robotsRulesSection(p.id, saved.robots);

  replace(main, h('h1', {}, `${p.name}: settings`), tokens, connect, test, robots.element, clientIp, siteHosts, alertsSection(p.id));
  robots.start();
  if (tokenCode !== undefined) tokenCode.scrollIntoView({ block: 'center' });
  return () => robots.stop();
};
