// Alerts as the node server runs them: the webhook store's deliveries through the SSRF-safe sender,
// the alert monitor over the visit store and the project's robots rules, and the service that
// watches projects with webhooks. One factory for `agentwarden serve` and anyone embedding it.
import {
  bucketStart,
  createAlertMonitor,
  createAlertService,
  createRobotsCheck,
  createWebhookDispatcher,
  type AlertService,
  type Catalog,
  type Project,
  type ProjectSettingsStore,
  type VisitStore,
} from '../../index.js';
import { createSafeWebhookSender } from './directory-fetcher.js';
import type { WebhookStore } from './webhook-store.js';

/** Options of `createNodeAlerts`. */
export interface NodeAlertsOptions {
  readonly webhooks: WebhookStore;
  readonly visits: VisitStore;
  readonly settings: ProjectSettingsStore;
  readonly catalog: Catalog;
  readonly findProject: (projectId: string) => Project | undefined | Promise<Project | undefined>;
  /** Let webhooks reach loopback receivers, over http too (development, tests). */
  readonly allowLoopback?: boolean;
  readonly onError?: (error: unknown) => void;
}

/**
 * Creates the alert service of a node server and resumes deliveries whose retries were due when
 * it last stopped. Call `start()` on the result to watch the projects that have webhooks.
 * @example
 * const alerts = createNodeAlerts({ webhooks, visits: store, settings: store, catalog: engine.catalog, findProject });
 * await alerts.start();
 */
export function createNodeAlerts(options: NodeAlertsOptions): AlertService {
  const { webhooks, visits } = options;
  const dispatcher = createWebhookDispatcher({
    transport: createSafeWebhookSender({ allowLoopback: options.allowLoopback ?? false, timeoutMs: 10_000, connectTimeoutMs: 5_000, userAgent: 'agentwarden-webhooks/1' }),
    log: webhooks,
    target: (id) => webhooks.target(id),
  });
  const alerts = createAlertService({
    visits,
    findProject: options.findProject,
    webhooks,
    dispatcher,
    markAgentSeen: webhooks.markAgentSeen,
    monitor: createAlertMonitor({
      catalog: options.catalog,
      markAgentSeen: webhooks.markAgentSeen,
      // Whole minutes: the stores answer them from their pre-aggregated counts.
      spoofedCount: async (projectId, from, to) => (await visits.stats({ projectId, from: bucketStart(from, 'minute'), to: bucketStart(to, 'minute'), interval: 'hour', by: 'result', filter: { result: 'verification_failed' } })).total,
      robotsCheck: createRobotsCheck(options.settings, { catalog: options.catalog }),
    }),
    onError: options.onError,
  });
  for (const delivery of webhooks.pending()) dispatcher.resume(delivery);
  return alerts;
}
