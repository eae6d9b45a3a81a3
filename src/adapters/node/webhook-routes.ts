// The admin API of alerts: a project's webhooks (list, create with the secret shown once, delete),
// "send test" and the delivery log. Mounted into createApiHandler as a route table.
import {
  ALERT_EVENT_TYPES,
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DEFAULT_SPOOFED_RISE_RULE,
  DEFAULT_UNLISTED_FIRST_VISIT_LIMIT,
  DEFAULT_VIOLATION_COOLDOWN_MS,
  DEFAULT_WEBHOOK_RETRY,
  openApiErrorResponses,
  jsonBodyProblem,
  parseJsonBody,
  problem,
  type AlertEventType,
  type AlertService,
  type ApiResponse,
  type FieldError,
  type Project,
  type RouteTable,
  type WebhookDelivery,
  type WebhookInfo,
} from '../../index.js';
import { hasControlCharacter, hasLoneSurrogate } from './control-characters.js';
import type { WebhookStore } from './webhook-store.js';

/** Webhooks a project may have. */
export const MAX_WEBHOOKS_PER_PROJECT = 10;
const MAX_URL_LENGTH = 2048;

/** Options of `createWebhookRoutes`. */
export interface WebhookRoutesOptions {
  readonly webhooks: WebhookStore;
  readonly alerts: AlertService;
  readonly findProject: (projectId: string) => Project | undefined | Promise<Project | undefined>;
  /** Why a webhook URL may not be used (the sender's SSRF rules), or undefined when it may. */
  readonly urlProblem: (url: string) => string | undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;
const json = (status: number, value: unknown): ApiResponse => ({ status, headers: JSON_HEADERS, body: JSON.stringify(value) });
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

// What a receiver runs to check a delivery (Node.js; any HMAC-SHA256 does the same).
const VERIFY_EXAMPLE = `import { createHmac, timingSafeEqual } from 'node:crypto';

// header: the Agentwarden-Signature request header; rawBody: the body exactly as received.
function verifyAgentwarden(secret, header, rawBody, toleranceSeconds = 300) {
  const fields = Object.fromEntries(header.split(',').map((part) => part.split('=', 2)));
  const t = Number(fields.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(\`\${t}.\${rawBody}\`).digest();
  const given = Buffer.from(fields.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}`;

/** The rules and the signature format, stated in every listing so the settings page can show them. */
const ABOUT = {
  events: ALERT_EVENT_TYPES,
  rules: {
    'agent.first_visit': `An agent visits the project for the first time since its first webhook was added (agents of the earlier visit history count as known); unlisted agents at most ${DEFAULT_UNLISTED_FIRST_VISIT_LIMIT.max} per ${DEFAULT_UNLISTED_FIRST_VISIT_LIMIT.windowMs / 3_600_000} hours per project.`,
    'visits.spoofed_rise': `At least ${DEFAULT_SPOOFED_RISE_RULE.minCount} visits failing verification within ${DEFAULT_SPOOFED_RISE_RULE.windowMs / 60_000} minutes, and at least ${DEFAULT_SPOOFED_RISE_RULE.factor} times the project's average per ${DEFAULT_SPOOFED_RISE_RULE.windowMs / 60_000} minutes over the ${DEFAULT_SPOOFED_RISE_RULE.baselineMs / 3_600_000} hours before; then quiet for ${DEFAULT_SPOOFED_RISE_RULE.cooldownMs / 60_000} minutes.`,
    'robots.violation': `An agent fetches a path the project's robots.txt rules disallow for it; at most one alert per agent per ${DEFAULT_VIOLATION_COOLDOWN_MS / 60_000} minutes.`,
  },
  signature: {
    header: 'Agentwarden-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the secret>',
    tolerance_seconds: DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
    example: VERIFY_EXAMPLE,
  },
  retries: { attempts: DEFAULT_WEBHOOK_RETRY.maxAttempts, first_delay_seconds: DEFAULT_WEBHOOK_RETRY.baseDelayMs / 1000, factor: DEFAULT_WEBHOOK_RETRY.factor },
};

function deliveryJson(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    event_type: delivery.event_type,
    event_id: delivery.event_id,
    created: iso(delivery.created),
    state: delivery.state,
    attempts: delivery.attempts,
    last_status: delivery.last_status,
    last_error: delivery.last_error,
    last_attempt: iso(delivery.last_attempt),
    next_attempt: iso(delivery.next_attempt),
  };
}

const webhookJson = (hook: WebhookInfo) => ({ id: hook.id, url: hook.url, events: hook.events, created: iso(hook.created) });

// OpenAPI documents of the routes.
const ADMIN = [{ adminSession: [] }];
const CSRF = { name: 'x-csrf-token', in: 'header', required: true, schema: { type: 'string' } };
const PROJECT = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const WEBHOOK = { name: 'webhook', in: 'path', required: true, schema: { type: 'string' } };
const object = (required: string[], properties: Record<string, object>) => ({ type: 'object', required, properties });
const content = (schema: object) => ({ 'application/json': { schema } });
const WEBHOOK_SCHEMA = object(['id', 'url', 'events', 'created'], {
  id: { type: 'string' },
  url: { type: 'string', format: 'uri' },
  events: { type: 'array', items: { enum: [...ALERT_EVENT_TYPES] } },
  created: { type: 'string', format: 'date-time' },
});
const DELIVERY_SCHEMA = object(['id', 'event_type', 'event_id', 'created', 'state', 'attempts', 'last_status', 'last_error', 'last_attempt', 'next_attempt'], {
  id: { type: 'string' },
  event_type: { type: 'string' },
  event_id: { type: 'string' },
  created: { type: 'string', format: 'date-time' },
  state: { enum: ['pending', 'delivered', 'failed'] },
  attempts: { type: 'integer' },
  last_status: { type: ['integer', 'null'] },
  last_error: { type: ['string', 'null'] },
  last_attempt: { type: ['string', 'null'], format: 'date-time' },
  next_attempt: { type: ['string', 'null'], format: 'date-time' },
});

// The listing: each webhook with its latest delivery, and what ABOUT states, member by member.
const RULE_TYPES = Object.keys(ABOUT.rules);
const LISTING_SCHEMA = object(['webhooks', 'events', 'rules', 'signature', 'retries'], {
  webhooks: {
    type: 'array',
    items: {
      ...WEBHOOK_SCHEMA,
      required: [...WEBHOOK_SCHEMA.required, 'latest_delivery'],
      properties: { ...WEBHOOK_SCHEMA.properties, latest_delivery: { oneOf: [DELIVERY_SCHEMA, { type: 'null' }], description: 'Its latest delivery, as GET .../deliveries lists them; null before the first.' } },
    },
  },
  events: { type: 'array', items: { enum: [...ALERT_EVENT_TYPES] }, description: 'The event types a webhook may subscribe to.' },
  rules: object(RULE_TYPES, Object.fromEntries(RULE_TYPES.map((type) => [type, { type: 'string', description: 'When this event is sent.' }]))),
  signature: object(['header', 'tolerance_seconds', 'example'], {
    header: { type: 'string', description: 'The Agentwarden-Signature header every delivery carries, and how it is computed.' },
    tolerance_seconds: { type: 'integer', minimum: 1, description: "How far from the receiver's clock a signature time should be accepted." },
    example: { type: 'string', description: 'Node.js code that checks a delivery.' },
  }),
  retries: object(['attempts', 'first_delay_seconds', 'factor'], {
    attempts: { type: 'integer', minimum: 1, description: 'Attempts at most per delivery, the first included.' },
    first_delay_seconds: { type: 'number', minimum: 0, description: 'The wait before the second attempt.' },
    factor: { type: 'number', minimum: 1, description: 'Each later wait is this many times the one before.' },
  }),
});

/**
 * Creates the webhook routes: `GET|POST /admin/projects/{id}/webhooks`,
 * `DELETE /admin/projects/{id}/webhooks/{webhook}`, `POST .../{webhook}/tests` and
 * `GET .../{webhook}/deliveries`. Admin session only; state changes need the CSRF token.
 * @throws {TypeError} when a store or function is missing.
 * @example
 * createApiHandler({ ..., routes: [createWebhookRoutes({ webhooks, alerts, findProject, urlProblem })] });
 */
export function createWebhookRoutes(options: WebhookRoutesOptions): RouteTable {
  if (typeof options?.webhooks?.create !== 'function') throw new TypeError('webhooks must be a WebhookStore from openWebhookStore()');
  if (typeof options.alerts?.sendTest !== 'function') throw new TypeError('alerts must be an AlertService');
  if (typeof options.findProject !== 'function' || typeof options.urlProblem !== 'function') throw new TypeError('findProject and urlProblem must be functions');
  const { webhooks, alerts } = options;
  const projectMissing = async (projectId: string) => ((await options.findProject(projectId)) === undefined ? problem('not-found', `There is no project ${JSON.stringify(projectId)}.`) : undefined);
  const hookOf = (projectId: string, webhookId: string) => webhooks.list(projectId).find((hook) => hook.id === webhookId);
  const invalid = (errors: FieldError[]) => problem('validation-failed', `The field "${errors[0]!.pointer.slice(1)}" is invalid; see errors.`, { errors });

  return {
    '/admin/projects/{id}/webhooks': {
      GET: {
        auth: 'admin',
        json: false,
        openApi: {
          summary: "A project's webhooks (never their secrets), each with its latest delivery, and the alert rules and signature format.",
          security: ADMIN,
          parameters: [PROJECT],
          responses: {
            '200': { description: 'The webhooks.', content: content(LISTING_SCHEMA) },
            ...openApiErrorResponses([401, 404, 405, 500]),
          },
        },
        async run({ params }) {
          const projectId = params['id']!;
          const missing = await projectMissing(projectId);
          if (missing !== undefined) return missing;
          const list = webhooks.list(projectId).map((hook) => {
            const [latest] = webhooks.deliveries(hook.id, 1);
            return { ...webhookJson(hook), latest_delivery: latest === undefined ? null : deliveryJson(latest) };
          });
          return json(200, { webhooks: list, ...ABOUT });
        },
      },
      POST: {
        auth: 'admin',
        json: true,
        openApi: {
          summary: 'Adds a webhook; its signing secret is in this response only.',
          security: ADMIN,
          parameters: [PROJECT, CSRF],
          requestBody: {
            required: true,
            content: content(object(['url', 'events'], { url: { type: 'string', maxLength: MAX_URL_LENGTH, description: 'https; plain http only to loopback when the server allows loopback webhooks' }, events: { type: 'array', minItems: 1, items: { enum: [...ALERT_EVENT_TYPES] } } })),
          },
          responses: {
            '201': { description: 'Created.', content: content({ ...WEBHOOK_SCHEMA, required: [...WEBHOOK_SCHEMA.required, 'secret'], properties: { ...WEBHOOK_SCHEMA.properties, secret: { type: 'string', description: 'Shown only here.' } } }) },
            ...openApiErrorResponses([400, 401, 403, 404, 405, 413, 415, 500]),
          },
        },
        async run({ request, params }) {
          const projectId = params['id']!;
          const missing = await projectMissing(projectId);
          if (missing !== undefined) return missing;
          const parsed = parseJsonBody(request.body, 8);
          if (!parsed.ok) return jsonBodyProblem(parsed);
          const body = parsed.value;
          if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid([{ pointer: '', code: 'type', message: 'must be an object' }]);
          const { url, events } = body as Record<string, unknown>;
          if (typeof url !== 'string' || url === '') return invalid([{ pointer: '/url', code: url === undefined ? 'required' : 'type', message: 'url must be a non-empty string' }]);
          if (url.length > MAX_URL_LENGTH) return invalid([{ pointer: '/url', code: 'max-length', message: `url must have at most ${MAX_URL_LENGTH} characters` }]);
          // Checked before the URL parser, which drops tabs and line breaks: the URL stored, listed and
          // shown must be the one delivered to, and CR/LF in a listing or log line could forge another.
          if (hasControlCharacter(url)) return invalid([{ pointer: '/url', code: 'control-character', message: 'url must not contain control characters or line breaks' }]);
          if (hasLoneSurrogate(url)) return invalid([{ pointer: '/url', code: 'invalid-unicode', message: 'url must be well-formed Unicode (it holds an unpaired surrogate)' }]);
          const urlProblem = options.urlProblem(url);
          if (urlProblem !== undefined) return invalid([{ pointer: '/url', code: 'refused', message: `url cannot be used: ${urlProblem}` }]);
          if (!Array.isArray(events) || events.length === 0) return invalid([{ pointer: '/events', code: events === undefined ? 'required' : 'type', message: 'events must be a non-empty array' }]);
          const unknown = events.findIndex((type) => !(ALERT_EVENT_TYPES as readonly unknown[]).includes(type));
          if (unknown !== -1) return invalid([{ pointer: `/events/${unknown}`, code: 'enum', message: `events must be among ${ALERT_EVENT_TYPES.join(', ')}` }]);
          // The same URL twice would have every alert delivered twice.
          if (webhooks.list(projectId).some((existing) => existing.url === url)) {
            return invalid([{ pointer: '/url', code: 'duplicate', message: 'this project already has a webhook to this URL; delete it first to change its events' }]);
          }
          if (webhooks.list(projectId).length >= MAX_WEBHOOKS_PER_PROJECT) {
            return problem('validation-failed', `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first.`, { errors: [{ pointer: '', code: 'too-many', message: `at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks per project` }] });
          }
          const { webhook, secret } = webhooks.create(projectId, url, [...new Set(events as AlertEventType[])]);
          await alerts.webhookAdded(projectId);
          return { ...json(201, { ...webhookJson(webhook), secret }), projectId };
        },
      },
    },
    '/admin/projects/{id}/webhooks/{webhook}': {
      DELETE: {
        auth: 'admin',
        json: false,
        openApi: { summary: 'Deletes a webhook and its delivery log; retries still due are dropped.', security: ADMIN, parameters: [PROJECT, WEBHOOK, CSRF], responses: { '204': { description: 'Deleted.' }, ...openApiErrorResponses([401, 403, 404, 405, 500]) } },
        async run({ params }) {
          const projectId = params['id']!;
          if (!webhooks.delete(projectId, params['webhook']!)) return problem('not-found', `There is no webhook ${JSON.stringify(params['webhook'])} in this project.`);
          await alerts.webhookRemoved(projectId);
          return { status: 204, headers: { 'cache-control': 'no-store' }, projectId };
        },
      },
    },
    '/admin/projects/{id}/webhooks/{webhook}/tests': {
      POST: {
        auth: 'admin',
        json: false,
        openApi: {
          summary: 'Sends a webhook.test event now; answers with the delivery after its first attempt (retries follow as for any event).',
          security: ADMIN,
          parameters: [PROJECT, WEBHOOK, CSRF],
          responses: { '200': { description: 'Attempted.', content: content(object(['delivery'], { delivery: DELIVERY_SCHEMA })) }, ...openApiErrorResponses([401, 403, 404, 405, 500]) },
        },
        async run({ params }) {
          const projectId = params['id']!;
          if (hookOf(projectId, params['webhook']!) === undefined) return problem('not-found', `There is no webhook ${JSON.stringify(params['webhook'])} in this project.`);
          const delivery = await alerts.sendTest(params['webhook']!);
          if (delivery === undefined) return problem('not-found', `There is no webhook ${JSON.stringify(params['webhook'])} in this project.`);
          return { ...json(200, { delivery: deliveryJson(delivery) }), projectId };
        },
      },
    },
    '/admin/projects/{id}/webhooks/{webhook}/deliveries': {
      GET: {
        auth: 'admin',
        json: false,
        openApi: {
          summary: 'The delivery log of a webhook: its latest deliveries, newest first, with state, attempts, last status and error.',
          security: ADMIN,
          parameters: [PROJECT, WEBHOOK],
          responses: { '200': { description: 'The deliveries.', content: content(object(['deliveries'], { deliveries: { type: 'array', items: DELIVERY_SCHEMA } })) }, ...openApiErrorResponses([401, 404, 405, 500]) },
        },
        async run({ params }) {
          const projectId = params['id']!;
          if (hookOf(projectId, params['webhook']!) === undefined) return problem('not-found', `There is no webhook ${JSON.stringify(params['webhook'])} in this project.`);
          return json(200, { deliveries: webhooks.deliveries(params['webhook']!).map(deliveryJson) });
        },
      },
    },
  };
}
