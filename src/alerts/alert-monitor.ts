// What is worth an alert in a batch of stored visits: an agent's first visit on the project, a
// rise in spoofed visits, a robots.txt violation. Memory of agents seen, the spoofed baseline and
// the robots check come in as functions; the clock is injected.
import { generateId } from '../api/token.js';
import type { Catalog } from '../catalog/catalog.js';
import { isUnlistedAgentId } from '../catalog/unlisted-agent.js';
import type { Project } from '../api/projects.js';
import type { StoredVisit } from '../visits/visit-store.js';
import type { WebhookEvent } from './webhook-delivery.js';

/** The events a webhook can subscribe to. */
export const ALERT_EVENT_TYPES = ['agent.first_visit', 'visits.spoofed_rise', 'robots.violation'] as const;
/** One of `ALERT_EVENT_TYPES`. */
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];
/** The event "send test" delivers; every webhook receives it. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * The spoofed-visits rule: alert when, within `windowMs`, at least `minCount` visits failed
 * verification AND that is at least `factor` times the project's average per window over the
 * `baselineMs` before the window; then stay quiet for `cooldownMs`.
 */
export interface SpoofedRiseRule {
  readonly windowMs: number;
  readonly minCount: number;
  readonly factor: number;
  readonly baselineMs: number;
  readonly cooldownMs: number;
}

/** Default: 10 spoofed visits in 10 minutes and 3x the last 24 hours' average per 10 minutes; at most one alert an hour. */
export const DEFAULT_SPOOFED_RISE_RULE: SpoofedRiseRule = { windowMs: 600_000, minCount: 10, factor: 3, baselineMs: 86_400_000, cooldownMs: 3_600_000 };

/** Default quiet time after a violation alert, per project and agent: one hour. */
export const DEFAULT_VIOLATION_COOLDOWN_MS = 3_600_000;

/**
 * The cap on first-visit alerts for unlisted agents (`unlisted:DCPbot`) per project: at most `max`
 * within `windowMs` of the first. Their names come from the traffic, so anyone can make up new
 * ones by the thousand; catalog agents are never capped.
 */
export interface UnlistedFirstVisitLimit {
  readonly max: number;
  readonly windowMs: number;
}

/** Default: at most 10 unlisted agents' first visits alerted per project a day. */
export const DEFAULT_UNLISTED_FIRST_VISIT_LIMIT: UnlistedFirstVisitLimit = { max: 10, windowMs: 86_400_000 };

/** Options of `createAlertMonitor`. */
export interface AlertMonitorOptions {
  readonly catalog: Catalog;
  /**
   * Records that an agent visited a project; resolves to true when it had never been seen there
   * before (the first visit). Persisted, so a restart does not announce known agents again.
   */
  readonly markAgentSeen: (projectId: string, agentId: string, time: number) => boolean | Promise<boolean>;
  /** Visits of the project that failed verification in [from, to), for the spoofed baseline. */
  readonly spoofedCount: (projectId: string, from: number, to: number) => Promise<number>;
  /** The project's robots check for this batch: the rule pattern a visit breaks, or undefined. */
  readonly robotsCheck: (projectId: string) => Promise<(visit: StoredVisit) => string | undefined>;
  readonly clock?: { now(): number };
  readonly spoofedRise?: Partial<SpoofedRiseRule>;
  readonly violationCooldownMs?: number;
  readonly unlistedFirstVisits?: Partial<UnlistedFirstVisitLimit>;
}

/** Finds the events in each appended batch. */
export interface AlertMonitor {
  /** The events this batch of one project raises, in the order found. */
  inspect(project: Project, visits: readonly StoredVisit[]): Promise<WebhookEvent[]>;
  /** Forgets what it keeps in memory for a project (deleted). */
  forget(projectId: string): void;
}

/** A visit as an event shows it: enough to find it on the dashboard (its id) and to read it at a glance. */
function visitSummary(visit: StoredVisit) {
  return {
    id: visit.id,
    time: new Date(visit.time).toISOString(),
    request_method: visit.request_method,
    request_path: visit.request_path,
    result: visit.result,
    client_ip: visit.client_ip,
    user_agent: visit.request_headers['user-agent'] ?? null,
  };
}

/**
 * Creates the monitor. Rules, stated for the documentation:
 * - `agent.first_visit`: an agent's first visit on the project since alerts were set up
 *   (agents seen before are known from the visit history when the first webhook is added);
 *   unlisted agents' by `DEFAULT_UNLISTED_FIRST_VISIT_LIMIT`: the alert that reaches the limit
 *   says so (`data.unlisted_limit`), those past it are counted and that count is carried by the
 *   first unlisted alert of the next window (`data.unlisted_not_alerted`);
 * - `visits.spoofed_rise`: `DEFAULT_SPOOFED_RISE_RULE` (by the time visits are received);
 * - `robots.violation`: a visit by an agent to a path the project's robots rules disallow for it,
 *   at most one alert per agent per `violationCooldownMs` (an unlisted agent breaks only rules
 *   that name it: robots.txt addresses a type's catalog agents, so made-up names cannot flood it).
 * @throws {TypeError} when a function it needs is missing; {RangeError} for a bad `unlistedFirstVisits`.
 * @example
 * const monitor = createAlertMonitor({ catalog, markAgentSeen, spoofedCount, robotsCheck });
 * const events = await monitor.inspect(project, batch);
 */
export function createAlertMonitor(options: AlertMonitorOptions): AlertMonitor {
  for (const name of ['markAgentSeen', 'spoofedCount', 'robotsCheck'] as const) {
    if (typeof options?.[name] !== 'function') throw new TypeError(`${name} must be a function`);
  }
  const { catalog } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const rule: SpoofedRiseRule = { ...DEFAULT_SPOOFED_RISE_RULE, ...options.spoofedRise };
  const violationCooldownMs = options.violationCooldownMs ?? DEFAULT_VIOLATION_COOLDOWN_MS;
  const unlistedLimit: UnlistedFirstVisitLimit = { ...DEFAULT_UNLISTED_FIRST_VISIT_LIMIT, ...options.unlistedFirstVisits };
  if (!Number.isSafeInteger(unlistedLimit.max) || unlistedLimit.max < 0) throw new RangeError(`unlistedFirstVisits.max must be a whole number >= 0, got ${String(unlistedLimit.max)}`);
  if (!Number.isFinite(unlistedLimit.windowMs) || unlistedLimit.windowMs <= 0) throw new RangeError(`unlistedFirstVisits.windowMs must be a number > 0, got ${String(unlistedLimit.windowMs)}`);
  // Per project: the unlisted first-visit window (its start, alerts sent, first visits not alerted
  // in it, and those of the window before still to report).
  const unlistedWindows = new Map<string, { start: number; sent: number; notAlerted: number; toReport: number }>();
  // Per project: receive times of recent spoofed visits (within the window), and quiet-until times.
  const spoofedTimes = new Map<string, number[]>();
  const quietUntil = new Map<string, number>();

  const agentJson = (agentId: string) => {
    const agent = catalog.getAgent(agentId);
    return { id: agentId, name: agent?.name ?? agentId, type: agent?.type ?? null, operator: agent?.operator ?? null, url: agent?.url ?? null, listed: !isUnlistedAgentId(agentId) };
  };
  const event = (type: AlertEventType, project: Project, data: Record<string, unknown>): WebhookEvent => ({
    id: generateId('evt'),
    type,
    created: new Date(clock.now()).toISOString(),
    project: { id: project.id, name: project.name },
    data,
  });
  const quiet = (key: string, now: number) => (quietUntil.get(key) ?? -Infinity) > now;

  /** Whether an unlisted agent's first visit may be alerted now, and what the alert adds to say about the limit. */
  const unlistedAllowance = (projectId: string, now: number): Record<string, unknown> | undefined => {
    let window = unlistedWindows.get(projectId);
    if (window === undefined || now >= window.start + unlistedLimit.windowMs) {
      window = { start: now, sent: 0, notAlerted: 0, toReport: (window?.notAlerted ?? 0) + (window?.toReport ?? 0) };
      unlistedWindows.set(projectId, window);
    }
    if (window.sent >= unlistedLimit.max) {
      window.notAlerted++;
      return undefined;
    }
    window.sent++;
    const said: Record<string, unknown> = {};
    if (window.toReport > 0) {
      said.unlisted_not_alerted = window.toReport;
      window.toReport = 0;
    }
    if (window.sent === unlistedLimit.max) {
      said.unlisted_limit = { max: unlistedLimit.max, window_hours: unlistedLimit.windowMs / 3_600_000, resumes: new Date(window.start + unlistedLimit.windowMs).toISOString() };
    }
    return said;
  };

  return {
    async inspect(project, visits) {
      const events: WebhookEvent[] = [];
      const now = clock.now();

      // First visits, once per agent even when the batch holds several of its visits.
      const firstSeen = new Set<string>();
      for (const visit of visits) {
        if (visit.agent_id === null || firstSeen.has(visit.agent_id)) continue;
        firstSeen.add(visit.agent_id);
        if (!(await options.markAgentSeen(project.id, visit.agent_id, visit.time))) continue;
        const limitSaid = isUnlistedAgentId(visit.agent_id) ? unlistedAllowance(project.id, now) : {};
        if (limitSaid !== undefined) events.push(event('agent.first_visit', project, { agent: agentJson(visit.agent_id), visit: visitSummary(visit), ...limitSaid }));
      }

      // Spoofed visits: count those received within the window.
      const spoofed = visits.filter((visit) => visit.result === 'verification_failed');
      if (spoofed.length > 0) {
        const times = (spoofedTimes.get(project.id) ?? []).concat(spoofed.map((visit) => visit.received));
        const inWindow = times.filter((time) => time > now - rule.windowMs);
        spoofedTimes.set(project.id, inWindow);
        const key = `spoofed\u0000${project.id}`;
        if (inWindow.length >= rule.minCount && !quiet(key, now)) {
          const windowStart = now - rule.windowMs;
          const before = await options.spoofedCount(project.id, windowStart - rule.baselineMs, windowStart);
          const baseline = before / (rule.baselineMs / rule.windowMs);
          if (inWindow.length >= rule.factor * baseline) {
            quietUntil.set(key, now + rule.cooldownMs);
            const byAgent = new Map<string, number>();
            for (const visit of spoofed) byAgent.set(visit.agent_id ?? '', (byAgent.get(visit.agent_id ?? '') ?? 0) + 1);
            events.push(
              event('visits.spoofed_rise', project, {
                window_minutes: rule.windowMs / 60_000,
                count: inWindow.length,
                baseline_per_window: Math.round(baseline * 100) / 100,
                rule: { min_count: rule.minCount, factor: rule.factor, baseline_hours: rule.baselineMs / 3_600_000 },
                agents_in_batch: [...byAgent].map(([id, count]) => ({ ...(id === '' ? { id: null, name: null } : agentJson(id)), count })),
                latest: visitSummary(spoofed[spoofed.length - 1]!),
              }),
            );
          }
        }
      }

      // robots.txt violations, one alert per agent per cooldown; a spoofed visit (verification
      // failed) is someone else's, not the agent's.
      const agentVisits = visits.filter((visit) => visit.agent_id !== null && visit.result !== 'verification_failed');
      if (agentVisits.length > 0) {
        const breaks = await options.robotsCheck(project.id);
        for (const visit of agentVisits) {
          const key = `robots\u0000${project.id}\u0000${visit.agent_id!}`;
          if (quiet(key, now)) continue;
          const broken = breaks(visit);
          if (broken === undefined) continue;
          quietUntil.set(key, now + violationCooldownMs);
          events.push(event('robots.violation', project, { agent: agentJson(visit.agent_id!), path: visit.request_path, rule: `Disallow: ${broken}`, visit: visitSummary(visit) }));
        }
      }
      if (quietUntil.size > 10_000) for (const [key, until] of quietUntil) if (until <= now) quietUntil.delete(key);
      return events;
    },
    forget(projectId) {
      spoofedTimes.delete(projectId);
      unlistedWindows.delete(projectId);
      for (const key of quietUntil.keys()) if (key.includes(`\u0000${projectId}`)) quietUntil.delete(key);
    },
  };
}
