// The alerts section of a project's settings: its webhooks with their latest delivery, "send
// test", the delivery log, deleting one, and adding one (its signing secret revealed once), with
// the alert rules and how to verify a signature.
import { errorText, request } from '../api.js';
import { copyText, field, h, replace } from '../dom.js';
import { formatDateTime, formatTime, plural } from '../format.js';
import { toast } from '../toast.js';

interface DeliveryJson {
  readonly id: string;
  readonly event_type: string;
  readonly created: string;
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly last_status: number | null;
  readonly last_error: string | null;
  readonly next_attempt: string | null;
}
interface WebhookJson {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly created: string;
  readonly latest_delivery: DeliveryJson | null;
}
interface WebhooksJson {
  readonly webhooks: readonly WebhookJson[];
  readonly events: readonly string[];
  readonly rules: Readonly<Record<string, string>>;
  readonly signature: { readonly header: string; readonly tolerance_seconds: number; readonly example: string };
}

const EVENT_LABELS: Record<string, string> = {
  'agent.first_visit': 'A new agent visits',
  'visits.spoofed_rise': 'Spoofed visits rise',
  'robots.violation': 'robots.txt is ignored',
  'webhook.test': 'Test',
};
const STATE_LABELS: Record<DeliveryJson['state'], string> = { delivered: 'Delivered', pending: 'Retrying', failed: 'Failed' };


function stateBadge(delivery: DeliveryJson): HTMLElement {
  const kind = delivery.state === 'delivered' ? 'ok' : delivery.state === 'failed' ? 'bad-badge' : 'warn-badge';
  return h('span', { class: `badge ${kind}` }, STATE_LABELS[delivery.state]);
}

function deliveryOutcome(delivery: DeliveryJson): string {
  const tries = plural(delivery.attempts, 'attempt');
  if (delivery.state === 'delivered') return `${delivery.last_status ?? ''} after ${tries}`;
  const why = delivery.last_error ?? 'not sent yet';
  return delivery.next_attempt === null ? `${why} (${tries}, given up)` : `${why} (${tries}; next ${formatTime(delivery.next_attempt)})`;
}

/** The alerts section of a project's settings page. */
export function alertsSection(projectId: string): HTMLElement {
  const base = `/admin/projects/${encodeURIComponent(projectId)}/webhooks`;
  const body = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading webhooks…'));
  const section = h('section', { class: 'card alerts', 'aria-labelledby': 'alerts-title' }, h('h2', { id: 'alerts-title' }, 'Alerts'), body);
  let revealedSecret: { id: string; secret: string } | undefined;

  const draw = async () => {
    let data: WebhooksJson;
    try {
      data = await request<WebhooksJson>('GET', base);
    } catch (error) {
      replace(body, h('p', { class: 'error' }, `The webhooks cannot be loaded: ${errorText(error)}`));
      body.removeAttribute('aria-busy');
      return;
    }

    const logs = new Map<string, HTMLElement>();
    const showLog = async (hook: WebhookJson, button: HTMLButtonElement) => {
      const box = logs.get(hook.id)!;
      if (!box.hidden) {
        box.hidden = true;
        button.setAttribute('aria-expanded', 'false');
        return;
      }
      const { deliveries } = await request<{ deliveries: DeliveryJson[] }>('GET', `${base}/${encodeURIComponent(hook.id)}/deliveries`);
      replace(
        box,
        deliveries.length === 0
          ? h('p', { class: 'empty' }, 'Nothing delivered yet.')
          : h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'stack compact deliveries' },
                h('caption', { class: 'visually-hidden' }, `Deliveries to ${hook.url}`),
                h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Outcome'))),
                h(
                  'tbody',
                  {},
                  ...deliveries.map((delivery) =>
                    h(
                      'tr',
                      {},
                      h('td', { 'data-label': 'Time' }, h('time', { datetime: delivery.created, title: formatDateTime(delivery.created) }, formatTime(delivery.created))),
                      // One child: in the narrow stacked layout the label and its code stay in one grid cell.
                      h('td', { 'data-label': 'Event' }, h('div', {}, EVENT_LABELS[delivery.event_type] ?? delivery.event_type, h('div', { class: 'muted small mono' }, delivery.event_type))),
                      h('td', { 'data-label': 'State' }, stateBadge(delivery)),
                      h('td', { 'data-label': 'Outcome', class: 'outcome' }, deliveryOutcome(delivery)),
                    ),
                  ),
                ),
              ),
            ),
      );
      box.hidden = false;
      button.setAttribute('aria-expanded', 'true');
    };
    const sendTest = async (hook: WebhookJson, button: HTMLButtonElement) => {
      button.disabled = true;
      try {
        const { delivery } = await request<{ delivery: DeliveryJson }>('POST', `${base}/${encodeURIComponent(hook.id)}/tests`);
        toast(delivery.state === 'delivered' ? `Test event delivered (${delivery.last_status}).` : `Test event not delivered: ${delivery.last_error ?? 'no answer'}.`, delivery.state === 'delivered' ? 'info' : 'error');
        await draw();
      } catch (error) {
        toast(errorText(error), 'error');
        button.disabled = false;
      }
    };
    const remove = async (hook: WebhookJson) => {
      if (!window.confirm(`Delete the webhook to ${hook.url}? Its delivery log goes too.`)) return;
      try {
        await request('DELETE', `${base}/${encodeURIComponent(hook.id)}`);
        toast('Webhook deleted.');
        await draw();
      } catch (error) {
        toast(errorText(error), 'error');
      }
    };

    const items = data.webhooks.map((hook) => {
      const log = h('div', { class: 'delivery-log', hidden: true, id: `log-${hook.id}` });
      logs.set(hook.id, log);
      const logButton = h('button', { type: 'button', class: 'small', 'aria-expanded': 'false', 'aria-controls': log.id }, 'Delivery log');
      logButton.addEventListener('click', () => void showLog(hook, logButton).catch((error: unknown) => toast(errorText(error), 'error')));
      const testButton = h('button', { type: 'button', class: 'small' }, 'Send test');
      testButton.addEventListener('click', () => void sendTest(hook, testButton));
      const latest = hook.latest_delivery;
      const secret =
        revealedSecret?.id === hook.id
          ? (() => {
              const code = h('code', { class: 'token', 'data-testid': 'webhook-secret' }, revealedSecret.secret);
              const shown = revealedSecret.secret;
              return h(
                'div',
                { class: 'reveal', role: 'alert' },
                h('p', {}, h('strong', {}, 'Signing secret — copy it now. '), 'It is shown only this once; it signs every delivery to this webhook.'),
                h('div', { class: 'row' }, code, h('button', { type: 'button', onclick: async () => toast((await copyText(shown, code)) ? 'Secret copied.' : 'Select the secret and copy it.') }, 'Copy secret')),
              );
            })()
          : null;
      return h(
        'li',
        { class: 'webhook' },
        secret,
        h('div', { class: 'path webhook-url' }, hook.url),
        h('div', { class: 'muted small' }, hook.events.map((type) => EVENT_LABELS[type] ?? type).join(' · ')),
        h(
          'p',
          { class: 'small latest' },
          latest === null ? h('span', { class: 'muted' }, 'No delivery yet.') : stateBadge(latest),
          latest === null ? null : ` ${EVENT_LABELS[latest.event_type] ?? latest.event_type}, ${formatTime(latest.created)}: ${deliveryOutcome(latest)}`,
        ),
        h('div', { class: 'row' }, testButton, logButton, h('button', { type: 'button', class: 'small danger', 'aria-label': `Delete the webhook to ${hook.url}`, onclick: () => void remove(hook) }, 'Delete')),
        log,
      );
    });
    revealedSecret = undefined;

    // --- Add a webhook -----------------------------------------------------------------------
    const urlInput = h('input', { type: 'text', inputmode: 'url', name: 'url', placeholder: 'https://hooks.example.com/agentwarden', autocomplete: 'off', spellcheck: 'false' });
    const boxes = data.events.map((type) => h('input', { type: 'checkbox', name: 'events', value: type, checked: true, id: `event-${type.replace(/\W/g, '-')}` }));
    const message = h('p', { class: 'error', role: 'alert' });
    const form = h(
      'form',
      {
        class: 'add-webhook',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          message.textContent = '';
          try {
            const created = await request<{ id: string; secret: string }>('POST', base, { body: { url: urlInput.value.trim(), events: boxes.filter((b) => b.checked).map((b) => b.value) } });
            revealedSecret = { id: created.id, secret: created.secret };
            toast('Webhook added.');
            await draw();
          } catch (error) {
            message.textContent = errorText(error);
          }
        },
      },
      h('h3', {}, 'Add a webhook'),
      field('Receiver URL', urlInput, 'https only; the server refuses private and internal addresses.'),
      h(
        'fieldset',
        { class: 'types' },
        h('legend', {}, 'Send an event when'),
        h('div', { class: 'checks' }, ...boxes.map((box) => h('label', { class: 'check', for: box.id, title: data.rules[box.value] ?? '' }, box, ` ${EVENT_LABELS[box.value] ?? box.value}`))),
      ),
      message,
      h('button', { type: 'submit', class: 'primary' }, 'Add webhook'),
    );

    const about = h(
      'details',
      { class: 'about-alerts' },
      h('summary', {}, 'Alert rules and signatures'),
      h('dl', {}, ...data.events.flatMap((type) => [h('dt', {}, EVENT_LABELS[type] ?? type, ' ', h('code', {}, type)), h('dd', {}, data.rules[type] ?? '')])),
      h(
        'p',
        {},
        'Each delivery is a JSON POST with ',
        h('code', {}, 'Agentwarden-Event'),
        ', ',
        h('code', {}, 'Agentwarden-Delivery'),
        ' (the same on retries) and ',
        h('code', {}, data.signature.header),
        `. Refuse timestamps more than ${data.signature.tolerance_seconds / 60} minutes away from your clock. Failed deliveries are retried with growing delays for about four hours.`,
      ),
      h('pre', { class: 'preview snippet', tabindex: 0, 'aria-label': 'Signature check in Node.js' }, data.signature.example),
    );

    replace(
      body,
      h('p', {}, 'Get a signed HTTP POST when a new agent shows up, spoofed visits rise, or an agent ignores your robots.txt rules.'),
      items.length === 0 ? h('p', { class: 'empty' }, 'No webhooks yet.') : h('ul', { class: 'webhooks' }, ...items),
      form,
      about,
    );
    body.removeAttribute('aria-busy');
    section.querySelector<HTMLElement>('[data-testid="webhook-secret"]')?.scrollIntoView({ block: 'center' });
  };
  void draw();
  return section;
}
