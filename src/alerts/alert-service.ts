// Alerts wired together: watches the visits of every project that has webhooks, turns each
// appended batch into events (alert-monitor.ts) and hands them to the dispatcher for each webhook
// subscribed to them; sends test events on demand.
import type { Project } from '../api/projects.js';
import { bucketStart, INTERVAL_MS, MAX_STATS_BUCKETS, MAX_STATS_KEYS } from '../visits/stats.js';
import type { StoredVisit, VisitStore } from '../visits/visit-store.js';
import { TEST_EVENT_TYPE, type AlertEventType, type AlertMonitor } from './alert-monitor.js';
import type { WebhookDelivery, WebhookDispatcher, WebhookTarget } from './webhook-delivery.js';
import { generateId } from '../api/token.js';

/** A webhook as its store lists it (never its secret). */
export interface WebhookInfo {
  readonly id: string;
  readonly project_id: string;
  readonly url: string;
  readonly events: readonly AlertEventType[];
  /** ms since the epoch. */
  readonly created: number;
}

/** What the service reads of the webhook store. */
export interface WebhookDirectory {
  /** The webhooks of one project, or of every project. */
  list(projectId?: string): readonly WebhookInfo[] | Promise<readonly WebhookInfo[]>;
  /** A webhook with its URL and secret, to deliver to. */
  target(webhookId: string): WebhookTarget | undefined | Promise<WebhookTarget | undefined>;
}

/** Options of `createAlertService`. */
export interface AlertServiceOptions {
  readonly visits: VisitStore;
  readonly findProject: (projectId: string) => Project | undefined | Promise<Project | undefined>;
  readonly webhooks: WebhookDirectory;
  readonly monitor: AlertMonitor;
  readonly dispatcher: WebhookDispatcher;
  /** Records that an agent is known on a project, without an alert (seeding). */
  readonly markAgentSeen: (projectId: string, agentId: string, time: number) => unknown;
  readonly clock?: { now(): number };
  /** Receives failures of a batch's alerts (a store that cannot answer); they never reach visit ingestion. */
  readonly onError?: (error: unknown) => void;
}

/** Running alerts. */
export interface AlertService {
  /** Watches every project that has a webhook (call at start). */
  start(): Promise<void>;
  /**
   * Starts watching a project after a webhook was added; the agents of its visit history are
   * recorded as known first, so only agents new from now on are announced.
   */
  webhookAdded(projectId: string): Promise<void>;
  /** Stops watching a project with no webhook left (or deleted). */
  webhookRemoved(projectId: string): Promise<void>;
  /** Delivers a `webhook.test` event to one webhook now; resolves to the delivery after its first attempt. */
  sendTest(webhookId: string): Promise<WebhookDelivery | undefined>;
  /** Waits until every batch seen so far has been inspected and its first attempts made (tests). */
  idle(): Promise<void>;
  close(): void;
}

/**
 * Creates the alert service.
 * @example
 * const alerts = createAlertService({ visits, findProject, webhooks, monitor, dispatcher, markAgentSeen });
 * await alerts.start();
 */
export function createAlertService(options: AlertServiceOptions): AlertService {
  const { visits, webhooks, monitor, dispatcher } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const onError = options.onError ?? (() => undefined);
  const watching = new Map<string, () => void>();
  // One chain per project, so a project's events go out in the order its visits came.
  const chains = new Map<string, Promise<void>>();

  // A project looked up once is trusted for a few seconds (a rename shows in alerts within them).
  const projects = new Map<string, { project: Project | undefined; until: number }>();
  const findProject = async (projectId: string): Promise<Project | undefined> => {
    const now = clock.now();
    const known = projects.get(projectId);
    if (known !== undefined && known.until > now) return known.project;
    const project = await options.findProject(projectId);
    if (projects.size >= 10_000) projects.clear();
    projects.set(projectId, { project, until: now + 5000 });
    return project;
  };

  const handle = async (projectId: string, batch: readonly StoredVisit[]): Promise<void> => {
    const project = await findProject(projectId);
    if (project === undefined) return;
    const events = await monitor.inspect(project, batch);
    if (events.length === 0) return;
    const hooks = await webhooks.list(projectId);
    for (const event of events) {
      for (const hook of hooks) {
        if (!hook.events.includes(event.type as AlertEventType)) continue;
        const target = await webhooks.target(hook.id);
        if (target !== undefined) await dispatcher.deliver(target, event);
      }
    }
  };
  const watch = (projectId: string) => {
    if (watching.has(projectId)) return;
    watching.set(
      projectId,
      visits.subscribe(projectId, (batch) => {
        const next = (chains.get(projectId) ?? Promise.resolve()).then(() => handle(projectId, batch)).catch(onError);
        chains.set(projectId, next);
      }),
    );
  };
  const unwatch = (projectId: string) => {
    watching.get(projectId)?.();
    watching.delete(projectId);
    chains.delete(projectId);
  };

  return {
    async start() {
      for (const hook of await webhooks.list()) watch(hook.project_id);
    },
    async webhookAdded(projectId) {
      const now = clock.now();
      const to = bucketStart(now, 'minute') + 60_000;
      // Every agent of the history the day counts keep (up to the stats limits), as known.
      const stats = await visits.stats({ projectId, from: to - (MAX_STATS_BUCKETS - 1) * INTERVAL_MS.day, to, interval: 'day', by: 'agent', limit: MAX_STATS_KEYS });
      for (const series of stats.series) if (series.key !== null) await options.markAgentSeen(projectId, series.key, now);
      watch(projectId);
    },
    async webhookRemoved(projectId) {
      projects.delete(projectId);
      if ((await webhooks.list(projectId)).length > 0) return;
      unwatch(projectId);
      monitor.forget(projectId);
    },
    async sendTest(webhookId) {
      const target = await webhooks.target(webhookId);
      if (target === undefined) return undefined;
      const project = await options.findProject(target.projectId);
      return dispatcher.deliver(target, {
        id: generateId('evt'),
        type: TEST_EVENT_TYPE,
        created: new Date(clock.now()).toISOString(),
        project: { id: target.projectId, name: project?.name ?? target.projectId },
        data: { message: 'A test event from agentwarden: this webhook works.' },
      });
    },
    async idle() {
      // Chains may grow while waited on: wait until a pass finds nothing new.
      for (;;) {
        const pending = [...chains.values()];
        await Promise.all(pending);
        const current = [...chains.values()];
        if (current.length === pending.length && pending.every((chain, i) => current[i] === chain)) return;
      }
    },
    close() {
      for (const projectId of [...watching.keys()]) unwatch(projectId);
      dispatcher.close();
    },
  };
}
