// A project's settings: its access tokens (a new one revealed once, then only a masked prefix),
// rotation and revocation, "send a test visit", the client-IP rule and the robots.txt rules with
// a live preview of the generated file.
import { AGENT_TYPES } from '../../catalog/types.js';
import { ApiError, apiUrl, request, type SettingsJson, type TokenInfo } from '../api.js';
import type { Page } from '../app.js';
import { copyText, field, h, replace, type Child } from '../dom.js';
import { formatCount, formatDateTime, formatDay } from '../format.js';
import { revealOnce, takeRevealed } from '../reveal.js';
import { toast } from '../toast.js';
import { alertsSection } from './settings-alerts.js';

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return String(error);
  return error.errors.length === 0 ? error.message : `${error.message} ${error.errors.map((e) => `${e.pointer || '(body)'}: ${e.message}`).join('; ')}`;
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
      live.length === 0 ? null : h('button', { type: 'button', onclick: () => void issue(false) }, 'Add a second token'),
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
  const test = section('Send a test visit', 'test-title', h('p', {}, "Records a visit by agentwarden's own test agent, so you can watch it arrive on the timeline and in the charts."), testButton, testResult);

  if (settings === undefined) {
    replace(main, h('h1', {}, `${p.name}: settings`), tokens, test, h('section', { class: 'card' }, h('h2', {}, 'Client IP and robots rules'), h('p', { class: 'error' }, `The settings cannot be loaded: ${settingsError ?? 'unknown error'}`)));
    return;
  }
  const saved = settings;

  // --- Client IP -----------------------------------------------------------------------------
  const savedProxies = saved.client_ip.trusted_proxies;
  const headersInput = h('input', { type: 'text', value: (saved.client_ip.headers ?? []).join(', '), placeholder: 'server default', autocomplete: 'off', spellcheck: 'false' });
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
          const headers = headersInput.value.split(',').map((s) => s.trim()).filter((s) => s !== '');
          // Empty fields leave the member out: the server's default applies.
          const clientIpBody = {
            ...(headers.length === 0 ? {} : { headers }),
            ...(proxies === '' ? {} : { trusted_proxies: /^\d+$/.test(proxies) ? Number(proxies) : proxies.split(',').map((s) => s.trim()).filter((s) => s !== '') }),
          };
          try {
            await request('PUT', '/project-settings', { params, body: { client_ip: clientIpBody } });
            toast('Client IP settings saved.');
          } catch (error) {
            ipMessage.textContent = errorText(error);
          }
        },
      },
      field('Headers, in order', headersInput, 'Comma-separated, e.g. cf-connecting-ip, x-forwarded-for.'),
      field('Trusted proxies', proxiesInput, 'A number of X-Forwarded-For hops added by your own proxies, or a comma-separated CIDR list.'),
      ipMessage,
      h('button', { type: 'submit' }, 'Save client IP settings'),
    ),
  );

  // --- Robots rules --------------------------------------------------------------------------
  const chosen = new Set(saved.robots?.agent_types ?? []);
  const boxes = AGENT_TYPES.map((type) => h('input', { type: 'checkbox', name: 'agent_types', value: type, checked: chosen.has(type) }));
  const disallowInput = h('textarea', { rows: 3, spellcheck: 'false' });
  disallowInput.value = (saved.robots?.disallow ?? ['/']).join('\n');
  const allowInput = h('textarea', { rows: 2, spellcheck: 'false' });
  allowInput.value = (saved.robots?.allow ?? []).join('\n');
  const preview = h('pre', { class: 'preview', tabindex: 0, 'aria-label': 'robots.txt preview', 'data-testid': 'robots-preview' });
  const previewInfo = h('p', { class: 'muted small', 'aria-live': 'polite' }, 'Generating the preview…');
  const robotsMessage = h('p', { class: 'error', role: 'alert' });
  // Empty path lists are left out (the engine's defaults: disallow "/", no allow lines).
  const options = () => {
    const disallow = lines(disallowInput.value);
    const allow = lines(allowInput.value);
    return { agent_types: boxes.filter((b) => b.checked).map((b) => b.value), ...(disallow.length === 0 ? {} : { disallow }), ...(allow.length === 0 ? {} : { allow }) };
  };
  let previewTimer: ReturnType<typeof setTimeout> | undefined;
  let previewSeq = 0;
  const updatePreview = () => {
    if (previewTimer !== undefined) clearTimeout(previewTimer);
    previewTimer = setTimeout(async () => {
      const seq = ++previewSeq;
      const body = options();
      if (body.agent_types.length === 0) {
        preview.textContent = '';
        previewInfo.textContent = 'Choose at least one agent type to see the generated robots.txt.';
        return;
      }
      try {
        const text = await request<string>('POST', '/robots-txts', { params, body, text: true });
        if (seq !== previewSeq) return;
        preview.textContent = text;
        const groups = (text.match(/^User-agent:/gm) ?? []).length;
        previewInfo.textContent = `${formatCount(groups)} user-agent groups, ${formatCount(new TextEncoder().encode(text).length)} bytes.`;
        robotsMessage.textContent = '';
      } catch (error) {
        if (seq !== previewSeq) return;
        robotsMessage.textContent = errorText(error);
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
  const robotsForm = h(
    'form',
    {
      oninput: () => updatePreview(),
      onchange: () => updatePreview(),
      onsubmit: async (event: Event) => {
        event.preventDefault();
        robotsMessage.textContent = '';
        const body = options();
        try {
          await request('PUT', '/project-settings', { params, body: { robots: body.agent_types.length === 0 ? null : body } });
          toast(body.agent_types.length === 0 ? 'Robots rules cleared.' : 'Robots rules saved; violations are counted against them.');
        } catch (error) {
          robotsMessage.textContent = errorText(error);
        }
      },
    },
    typeList,
    h('div', { class: 'two' }, field('Disallow paths (one per line)', disallowInput), field('Allow paths (one per line)', allowInput)),
    robotsMessage,
    h('button', { type: 'submit' }, 'Save robots rules'),
  );
  const copyButton = h('button', { type: 'button', onclick: async () => toast((await copyText(preview.textContent ?? '', preview)) ? 'robots.txt copied.' : 'Select the text and copy it.') }, 'Copy robots.txt');
  const robots = section(
    'robots.txt rules',
    'robots-title',
    h('p', {}, 'Choose the kinds of agents to keep out. The saved rules also define what counts as a robots.txt violation in the analytics.'),
    h('div', { class: 'robots' }, robotsForm, h('div', { class: 'preview-box' }, h('h3', {}, 'Preview'), previewInfo, preview, copyButton)),
  );

  replace(main, h('h1', {}, `${p.name}: settings`), tokens, test, robots, clientIp, alertsSection(p.id));
  updatePreview();
  if (tokenCode !== undefined) tokenCode.scrollIntoView({ block: 'center' });
  return () => {
    if (previewTimer !== undefined) clearTimeout(previewTimer);
    previewSeq++;
  };
};
