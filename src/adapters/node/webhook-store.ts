// Webhooks in the data directory's SQLite file: each project's webhooks with their signing secrets
// (encrypted with AES-256-GCM under a key kept in a separate file, so a copy of the database alone
// cannot sign), the delivery log (the last deliveries per webhook) and the agents already seen per
// project (for "first visit" alerts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDataDirDatabase } from './sqlite-driver.js';
import { hasControlCharacter, hasLoneSurrogate } from './control-characters.js';
import { generateId, type AlertEventType, type WebhookDelivery, type WebhookDirectory, type WebhookInfo, type WebhookTarget } from '../../index.js';

/** Deliveries kept per webhook in the log. */
export const DELIVERIES_KEPT = 50;

/** The webhook store. */
export interface WebhookStore extends WebhookDirectory {
  list(projectId?: string): WebhookInfo[];
  target(webhookId: string): WebhookTarget | undefined;
  /**
   * Creates a webhook; its secret is in the result only, never readable through the store's listings.
   * @throws {RangeError} when `url` holds a control character or a lone surrogate (the routes refuse those with a 400 first).
   */
  create(projectId: string, url: string, events: readonly AlertEventType[]): { webhook: WebhookInfo; secret: string };
  /** Deletes one webhook of a project with its delivery log; false when there is none. */
  delete(projectId: string, webhookId: string): boolean;
  /** Deletes everything kept for a project: webhooks, deliveries, agents seen. */
  deleteProject(projectId: string): void;
  /** The newest deliveries of a webhook, newest first. */
  deliveries(webhookId: string, limit?: number): WebhookDelivery[];
  /** Writes a delivery (the dispatcher's log), keeping the last `DELIVERIES_KEPT` of its webhook. */
  save(delivery: WebhookDelivery): void;
  /** Deliveries still waiting for a retry (to resume after a restart). */
  pending(): WebhookDelivery[];
  /** Records an agent as seen on a project; true when it was not before. */
  markAgentSeen(projectId: string, agentId: string, time: number): boolean;
  close(): void;
}

/** Options of `openWebhookStore`. */
export interface WebhookStoreOptions {
  /** Directory holding `agentwarden.db` and the secrets key `webhook-secrets.key`; created when missing. */
  readonly dataDir: string;
}

const COMPONENT = 'webhooks';
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE webhooks (
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     url TEXT NOT NULL,
     events TEXT NOT NULL,
     secret TEXT NOT NULL,
     created INTEGER NOT NULL
   );
   CREATE INDEX webhooks_by_project ON webhooks(project_id);
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     webhook_id TEXT NOT NULL,
     project_id TEXT NOT NULL,
     event_type TEXT NOT NULL,
     event_id TEXT NOT NULL,
     body TEXT NOT NULL,
     created INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     state TEXT NOT NULL,
     last_status INTEGER,
     last_error TEXT,
     last_attempt INTEGER,
     next_attempt INTEGER
   );
   CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, created);
   CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(state) WHERE state = 'pending';
   CREATE TABLE alert_seen_agents (
     project_id TEXT NOT NULL,
     agent_id TEXT NOT NULL,
     first_seen INTEGER NOT NULL,
     PRIMARY KEY (project_id, agent_id)
   ) WITHOUT ROWID;`,
];

const KEY_FILE = 'webhook-secrets.key';

/** The key that encrypts webhook secrets: 32 random bytes, created once, readable by the owner only. */
function secretsKey(dataDir: string): Buffer {
  const file = join(dataDir, KEY_FILE);
  try {
    // 'wx': never overwrite a key another process created a moment ago (its secrets would be lost).
    writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (key.length !== 32) throw new RangeError(`${file} must hold a 32-byte key (base64url), got ${key.length} bytes`);
  return key;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  project_id: string;
  event_type: string;
  event_id: string;
  body: string;
  created: number;
  attempts: number;
  state: WebhookDelivery['state'];
  last_status: number | null;
  last_error: string | null;
  last_attempt: number | null;
  next_attempt: number | null;
}

/**
 * Opens the webhook store in a data directory (creating its tables and key as needed).
 * @throws {TypeError} for a missing data directory; {RangeError} for a damaged key file or a newer schema.
 * @example
 * const webhooks = openWebhookStore({ dataDir: './data-dir' });
 * const { webhook, secret } = webhooks.create('prj_1', 'https://hooks.example.com/aw', ['agent.first_visit']);
 */
export function openWebhookStore(options: WebhookStoreOptions): WebhookStore {
  if (typeof options?.dataDir !== 'string' || options.dataDir === '') throw new TypeError(`dataDir must be a directory path, got ${JSON.stringify(options?.dataDir)}`);
  const db = openDataDirDatabase(options.dataDir);
  const key = secretsKey(options.dataDir);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const current = db.prepare<[string], { version: number }>('SELECT version FROM schema_versions WHERE component = ?').get(COMPONENT)?.version ?? 0;
    if (current > MIGRATIONS.length) throw new RangeError(`the webhook tables have schema version ${current}; this agentwarden knows up to ${MIGRATIONS.length}`);
    for (let version = current; version < MIGRATIONS.length; version++) db.exec(MIGRATIONS[version]!);
    db.prepare('INSERT INTO schema_versions (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version').run(COMPONENT, MIGRATIONS.length);
  }).immediate();

  // AES-256-GCM with the webhook id as associated data: a ciphertext moved to another row does not decrypt.
  const encrypt = (webhookId: string, secret: string): string => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(webhookId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
  };
  const decrypt = (webhookId: string, stored: string): string => {
    const [version, iv, sealed, tag] = stored.split('.');
    if (version !== 'v1' || iv === undefined || sealed === undefined || tag === undefined) throw new RangeError(`webhook ${webhookId} has a secret in an unknown format`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(webhookId)).setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  };

  type WebhookRow = { id: string; project_id: string; url: string; events: string; created: number };
  const info = (row: WebhookRow): WebhookInfo => ({ id: row.id, project_id: row.project_id, url: row.url, events: JSON.parse(row.events) as AlertEventType[], created: row.created });
  const allHooks = db.prepare<[], WebhookRow>('SELECT id, project_id, url, events, created FROM webhooks ORDER BY created, id');
  const projectHooks = db.prepare<[string], WebhookRow>('SELECT id, project_id, url, events, created FROM webhooks WHERE project_id = ? ORDER BY created, id');
  const oneHook = db.prepare<[string], WebhookRow & { secret: string }>('SELECT id, project_id, url, events, created, secret FROM webhooks WHERE id = ?');
  const insertHook = db.prepare('INSERT INTO webhooks (id, project_id, url, events, secret, created) VALUES (?, ?, ?, ?, ?, ?)');
  const deleteHook = db.prepare('DELETE FROM webhooks WHERE id = ? AND project_id = ?');
  const deleteHookDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE webhook_id = ?');
  const upsertDelivery = db.prepare(
    `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_type, event_id, body, created, attempts, state, last_status, last_error, last_attempt, next_attempt)
     VALUES (@id, @webhook_id, @project_id, @event_type, @event_id, @body, @created, @attempts, @state, @last_status, @last_error, @last_attempt, @next_attempt)
     ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, state = excluded.state, last_status = excluded.last_status, last_error = excluded.last_error,
       last_attempt = excluded.last_attempt, next_attempt = excluded.next_attempt`,
  );
  // Keeps the newest DELIVERIES_KEPT of the webhook.
  const pruneDeliveries = db.prepare(
    `DELETE FROM webhook_deliveries WHERE webhook_id = ? AND id NOT IN (SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created DESC, id DESC LIMIT ${DELIVERIES_KEPT})`,
  );
  const hookDeliveries = db.prepare<[string, number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created DESC, id DESC LIMIT ?');
  const pendingDeliveries = db.prepare<[], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE state = 'pending'");
  const insertSeen = db.prepare('INSERT INTO alert_seen_agents (project_id, agent_id, first_seen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
  // Agents known to be seen, so a busy project's batches cost no write for them.
  const seen = new Set<string>();
  const deleteProjectRows = db.transaction((projectId: string) => {
    for (const table of ['webhook_deliveries', 'webhooks', 'alert_seen_agents']) db.prepare(`DELETE FROM ${table} WHERE project_id = ?`).run(projectId);
    seen.clear();
  });

  return {
    list(projectId) {
      return (projectId === undefined ? allHooks.all() : projectHooks.all(projectId)).map(info);
    },
    target(webhookId) {
      const row = oneHook.get(webhookId);
      return row === undefined ? undefined : { id: row.id, projectId: row.project_id, url: row.url, secret: decrypt(row.id, row.secret) };
    },
    create(projectId, url, events) {
      // The routes answer 400 first; this keeps any other caller from storing a URL that differs from the one delivered to.
      if (hasControlCharacter(url) || hasLoneSurrogate(url)) throw new RangeError(`url must not contain control characters or lone surrogates, got ${JSON.stringify(url.slice(0, 100))}`);
      const id = generateId('whk');
      // 256 random bits, in the whsec_ form receivers recognise.
      const secret = `whsec_${randomBytes(32).toString('base64url')}`;
      const created = Date.now();
      insertHook.run(id, projectId, url, JSON.stringify(events), encrypt(id, secret), created);
      return { webhook: { id, project_id: projectId, url, events: [...events], created }, secret };
    },
    delete(projectId, webhookId) {
      return db.transaction(() => {
        const deleted = deleteHook.run(webhookId, projectId).changes > 0;
        if (deleted) deleteHookDeliveries.run(webhookId);
        return deleted;
      }).immediate();
    },
    deleteProject(projectId) {
      deleteProjectRows.immediate(projectId);
    },
    deliveries(webhookId, limit = DELIVERIES_KEPT) {
      return hookDeliveries.all(webhookId, limit);
    },
    save(delivery) {
      db.transaction(() => {
        // A webhook deleted while its delivery was in flight keeps no log.
        if (oneHook.get(delivery.webhook_id) === undefined) return;
        upsertDelivery.run(delivery);
        pruneDeliveries.run(delivery.webhook_id, delivery.webhook_id);
      }).immediate();
    },
    pending() {
      return pendingDeliveries.all();
    },
    markAgentSeen(projectId, agentId, time) {
      const key = `${projectId}\u0000${agentId}`;
      if (seen.has(key)) return false;
      const added = insertSeen.run(projectId, agentId, Math.floor(time)).changes > 0;
      if (seen.size >= 100_000) seen.clear();
      seen.add(key);
      return added;
    },
    close() {
      if (db.open) db.close();
    },
  };
}
