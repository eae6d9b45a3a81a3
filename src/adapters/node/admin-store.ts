// The dashboard's admin login: one admin secret (stored as an scrypt hash) and login sessions
// (random ids kept only as SHA-256 hashes, expiring, each with its CSRF token), in the data
// directory's SQLite file, plus a per-address limit on login attempts.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { openDataDirDatabase } from './sqlite-driver.js';
import { createRateLimiter, type AdminAuthenticator, type AdminSession, type ApiRequest, type Project } from '../../index.js';
import { hashTokenNode } from './sqlite-store.js';

/** The cookie that carries the session id. */
export const ADMIN_SESSION_COOKIE = 'aw_session';

/** scrypt cost parameters (RFC 7914 §2). */
export interface ScryptCost {
  /** CPU/memory cost, a power of two. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

// OWASP Password Storage Cheat Sheet minimum for scrypt: N=2^17, r=8, p=1 for human passwords. The
// secret here is 192 random bits, so brute force is hopeless at any cost; 2^15 (about 32 MiB and
// ~60 ms) only slows an attacker who stole the database file, and keeps login quick.
const DEFAULT_SCRYPT: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const SCRYPT_KEY_BYTES = 32;

/** Why a login was refused. */
export type LoginFailure = { readonly reason: 'wrong-secret' } | { readonly reason: 'rate-limited'; readonly retryAfterSeconds: number } | { readonly reason: 'no-secret' };

/** A new session: the id goes into the cookie and is never stored in clear. */
export interface NewAdminSession {
  readonly cookieValue: string;
  readonly session: AdminSession;
  /** Milliseconds since the epoch. */
  readonly expires: number;
  /** Seconds from now to `expires`, for the cookie's Max-Age. */
  readonly maxAgeSeconds: number;
}

/** The outcome of a login attempt. */
export type LoginResult = ({ readonly ok: true } & NewAdminSession) | ({ readonly ok: false } & LoginFailure);

/** Admin secret and sessions; also the API's AdminAuthenticator (cookie sessions). */
export interface AdminStore extends AdminAuthenticator {
  /** Creates the admin secret when there is none and returns it in clear (to print once); undefined when one exists. */
  ensureSecret(): Promise<string | undefined>;
  /** Replaces the admin secret with a new random one, ends every session, and returns the new secret. */
  resetSecret(): Promise<string>;
  /** Checks a secret (rate-limited per client address) and opens a session when it is right. */
  login(secret: string, clientAddress: string): Promise<LoginResult>;
  /** The live session whose cookie value this is. */
  findSession(cookieValue: string): (AdminSession & { readonly expires: number }) | undefined;
  /** Ends one session; true when it was live. */
  logout(sessionId: string): boolean;
  /** The live session the request's cookie names, with its expiry (ms since the epoch). */
  authenticate(request: ApiRequest): (AdminSession & { readonly expires: number }) | undefined;
  /** Live sessions now. */
  countSessions(): number;
  /** Changes at every logout and secret reset through this store, so open event streams ask about their session at once. */
  sessionsVersion(): number;
  close(): void;
}

/** Options of `openAdminStore`. */
export interface AdminStoreOptions {
  /** Directory holding `agentwarden.db` (shared with the project and visit store); created when missing. */
  readonly dataDir: string;
  /** Finds a project by id, for admin requests naming `?project=`. */
  readonly findProject?: (projectId: string) => Project | undefined;
  /** Milliseconds since the epoch: session expiry and the login limiter. */
  readonly clock?: { now(): number };
  /** How long a session lives from login (default 12 h). */
  readonly sessionMs?: number;
  /** Login attempts per address: `burst` at once, then one per `refillSeconds` (default 10 and 6 s). */
  readonly loginLimit?: { readonly burst: number; readonly refillSeconds: number };
  /** scrypt cost (default N=2^15, r=8, p=1); tests lower it. */
  readonly scrypt?: ScryptCost;
}

// This component's schema, versioned in its own row so the stores sharing the file migrate independently.
const COMPONENT = 'admin';
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE admin_secret (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     hash TEXT NOT NULL,
     created TEXT NOT NULL
   );
   CREATE TABLE admin_sessions (
     id_hash TEXT PRIMARY KEY,
     csrf_token TEXT NOT NULL,
     created INTEGER NOT NULL,
     expires INTEGER NOT NULL
   );
   CREATE INDEX admin_sessions_expires ON admin_sessions(expires);`,
];

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

function scryptAsync(secret: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  // maxmem must exceed 128 * N * r bytes (Node's default 32 MiB is exactly the default cost).
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(secret, salt, SCRYPT_KEY_BYTES, options, (error, key) => (error === null ? resolve(key) : reject(error))));
}

/** `scrypt$N$r$p$salt$hash`: the parameters travel with the hash, so a later cost change still verifies old hashes. */
async function hashSecret(secret: string, cost: ScryptCost): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  // Constant time: the comparison must not tell how many leading bytes matched.
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** The value of one cookie in a Cookie header (RFC 6265 §5.4: `name=value` pairs joined by "; "). */
export function readCookie(header: string | readonly string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const line of typeof header === 'string' ? [header] : header) {
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
    }
  }
  return undefined;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${String(value)}`);
  return value;
}

/**
 * Opens the admin store in a data directory (creating its tables as needed).
 * @throws {TypeError | RangeError} for a missing data directory or a bad session length, login limit or scrypt cost.
 * @example
 * const admin = openAdminStore({ dataDir: './data-dir', findProject: (id) => projects.find(id) });
 * const secret = await admin.ensureSecret(); // printed once on first start
 */
export function openAdminStore(options: AdminStoreOptions): AdminStore {
  if (typeof options?.dataDir !== 'string' || options.dataDir === '') throw new TypeError(`dataDir must be a directory path, got ${JSON.stringify(options?.dataDir)}`);
  const clock = options.clock ?? { now: () => Date.now() };
  const sessionMs = positive('sessionMs', options.sessionMs, 12 * 60 * 60 * 1000);
  const burst = positive('loginLimit.burst', options.loginLimit?.burst, 10);
  const refillSeconds = positive('loginLimit.refillSeconds', options.loginLimit?.refillSeconds, 6);
  const cost = options.scrypt ?? DEFAULT_SCRYPT;
  if (!Number.isSafeInteger(cost.N) || cost.N < 2 || (cost.N & (cost.N - 1)) !== 0) throw new RangeError(`scrypt.N must be a power of two, got ${String(cost.N)}`);
  const findProject = options.findProject ?? (() => undefined);
  const limiter = createRateLimiter({ ratePerSecond: 1 / refillSeconds, burst, clock });

  const db = openDataDirDatabase(options.dataDir);
  db.pragma('journal_mode = WAL');
  // `admin reset-password` writes while the server runs: wait for the lock, do not fail.
  db.pragma('busy_timeout = 5000');
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    const row = db.prepare<[string], { version: number }>('SELECT version FROM schema_versions WHERE component = ?').get(COMPONENT);
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) throw new RangeError(`the admin tables have schema version ${current}; this agentwarden knows up to ${MIGRATIONS.length}`);
    for (let version = current; version < MIGRATIONS.length; version++) db.exec(MIGRATIONS[version]!);
    db.prepare('INSERT INTO schema_versions (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version').run(COMPONENT, MIGRATIONS.length);
  }).immediate();

  const readSecret = db.prepare<[], { hash: string }>('SELECT hash FROM admin_secret WHERE id = 1');
  const insertSecret = db.prepare('INSERT INTO admin_secret (id, hash, created) VALUES (1, ?, ?) ON CONFLICT(id) DO NOTHING');
  const replaceSecret = db.prepare('INSERT INTO admin_secret (id, hash, created) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET hash = excluded.hash, created = excluded.created');
  const insertSession = db.prepare('INSERT INTO admin_sessions (id_hash, csrf_token, created, expires) VALUES (?, ?, ?, ?)');
  const readSession = db.prepare<[string, number], { id_hash: string; csrf_token: string; expires: number }>(
    'SELECT id_hash, csrf_token, expires FROM admin_sessions WHERE id_hash = ? AND expires > ?',
  );
  const deleteSession = db.prepare('DELETE FROM admin_sessions WHERE id_hash = ?');
  const deleteExpired = db.prepare('DELETE FROM admin_sessions WHERE expires <= ?');
  const deleteAll = db.prepare('DELETE FROM admin_sessions');
  const countLive = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM admin_sessions WHERE expires > ?');

  // 192 random bits: unguessable, and short enough to paste.
  const newSecret = () => `aws_${base64url(randomBytes(24))}`;
  // Bumped after every session end written here. A reset by another process (the CLI while the
  // server runs) is not seen here: streams find it at their next periodic ask.
  let sessionsVersion = 0;

  const store: AdminStore = {
    async ensureSecret() {
      if (readSecret.get() !== undefined) return undefined;
      const secret = newSecret();
      const hash = await hashSecret(secret, cost);
      // Another process may have won the race while we hashed: then its secret stands and ours is never shown.
      return insertSecret.run(hash, new Date(clock.now()).toISOString()).changes === 1 ? secret : undefined;
    },
    async resetSecret() {
      const secret = newSecret();
      const hash = await hashSecret(secret, cost);
      db.transaction(() => {
        replaceSecret.run(hash, new Date(clock.now()).toISOString());
        // Whoever knew the old secret must not stay logged in with it.
        deleteAll.run();
      }).immediate();
      sessionsVersion++;
      return secret;
    },
    async login(secret, clientAddress) {
      // Limited before the scrypt runs, so guessing costs the attacker time and us no CPU.
      const decision = limiter.take(clientAddress);
      if (!decision.ok) return { ok: false, reason: 'rate-limited', retryAfterSeconds: decision.retryAfterSeconds };
      const stored = readSecret.get();
      if (stored === undefined) return { ok: false, reason: 'no-secret' };
      if (typeof secret !== 'string' || secret.length > 256 || !(await verifySecret(secret, stored.hash))) return { ok: false, reason: 'wrong-secret' };
      const now = clock.now();
      deleteExpired.run(now);
      const cookieValue = base64url(randomBytes(32));
      const idHash = hashTokenNode(cookieValue);
      const csrfToken = base64url(randomBytes(32));
      const expires = now + sessionMs;
      insertSession.run(idHash, csrfToken, now, expires);
      return { ok: true, cookieValue, session: { id: idHash, csrfToken }, expires, maxAgeSeconds: Math.max(1, Math.floor(sessionMs / 1000)) };
    },
    findSession(cookieValue) {
      if (cookieValue === '' || cookieValue.length > 128) return undefined;
      // Looked up by hash: the database never holds a usable cookie, and the index lookup compares
      // hashes of the secret, so its timing reveals nothing about the cookie value.
      const row = readSession.get(hashTokenNode(cookieValue), clock.now());
      return row === undefined ? undefined : { id: row.id_hash, csrfToken: row.csrf_token, expires: row.expires };
    },
    logout(sessionId) {
      const ended = deleteSession.run(sessionId).changes > 0;
      sessionsVersion++;
      return ended;
    },
    sessionsVersion: () => sessionsVersion,
    countSessions() {
      return countLive.get(clock.now())!.n;
    },
    authenticate(request: ApiRequest) {
      // Header names may come in any case (ApiRequest); node delivers them lower-case.
      const name = 'cookie' in request.headers ? 'cookie' : Object.keys(request.headers).find((key) => key.toLowerCase() === 'cookie');
      const value = readCookie(name === undefined ? undefined : request.headers[name], ADMIN_SESSION_COOKIE);
      return value === undefined ? undefined : store.findSession(value);
    },
    findProject(projectId) {
      return findProject(projectId);
    },
    close() {
      if (db.open) db.close();
    },
  };
  return store;
}
