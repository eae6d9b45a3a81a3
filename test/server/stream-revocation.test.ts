// GET /visits/stream ends once the credential that opened it is no longer valid (dashboard audit
// #1): a logout, a new admin secret (in this server or from the CLI's process), a revoked or
// rotated token and a deleted project each end an open stream over the real node server on
// 127.0.0.1, and no visit stored after the revocation reaches it. A store that cannot answer the
// check leaves the stream open, and a busy stream asks the token store about once a second.
import { afterEach, describe, expect, it } from 'vitest';
import { hashTokenNode, openAdminStore, openSqliteStore, type AdminStore, type SqliteStore } from '../../src/adapters/node/index.js';
import { VisitStoreUnavailableError, type AdminAuthenticator, type EnrichedVisit, type ProjectLookup } from '../../src/index.js';
import { FAST_SCRYPT, GPTBOT_UA, post, startAdminTestServer, type AdminTestServer } from './helpers.js';

const REVOKED = 'event: closed\ndata: {"reason":"credential-revoked"}\n\n';

interface Running extends AdminTestServer {
  readonly projectId: string;
  /** A token of the project that opens streams in the tests, and its id; `poster` posts their visits. */
  readonly token: string;
  readonly tokenId: string;
  readonly poster: string;
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

interface StartOptions {
  readonly heartbeatMs?: number;
  readonly credentialCheckMs?: number;
  /** Wraps the token lookup the API asks (an outage, a call count). */
  readonly projects?: (store: SqliteStore) => ProjectLookup;
  /** Wraps the admin sessions the API asks. */
  readonly admin?: (admin: AdminStore) => AdminAuthenticator;
}

async function start(options: StartOptions = {}): Promise<Running> {
  const server = await startAdminTestServer(
    (store, _dir, admin) => ({
      projects: options.projects?.(store) ?? store,
      admin: options.admin?.(admin) ?? admin,
      eventStream: { heartbeatMs: options.heartbeatMs ?? 100, retryMs: 60_000, ...(options.credentialCheckMs === undefined ? {} : { credentialCheckMs: options.credentialCheckMs }) },
    }),
    { shutdownGraceMs: 1000 },
  );
  const { id: projectId, token: poster } = server.store.createProject('site');
  const { token, tokenId } = server.store.issueToken(projectId, { revokeOthers: false });
  const r: Running = { ...server, projectId, token, tokenId, poster };
  running.push(r);
  return r;
}

/** A token lookup that runs `before` with the hash first (to count calls, or to fail). */
function lookupWith(before: (hash: string) => void): (store: SqliteStore) => ProjectLookup {
  return (store) => ({
    findByTokenHash: (hash) => {
      before(hash);
      return store.findByTokenHash(hash);
    },
    tokensVersion: () => store.tokensVersion!(),
  });
}

/** An open event stream, read in the background. */
interface Stream {
  text(): string;
  /** Resolves true once `predicate` holds for what arrived, false after `ms`. */
  until(predicate: (text: string) => boolean, ms: number): Promise<boolean>;
  /** Resolves true once the server ended the response, false after `ms`. */
  ended(ms: number): Promise<boolean>;
  cancel(): Promise<void>;
}

const streams: Stream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) await s.cancel();
});

async function openStream(r: Running, headers: Record<string, string>, query = ''): Promise<Stream> {
  const response = await fetch(`${r.url}/visits/stream${query}`, { headers });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let done = false;
  let wake = () => undefined as void;
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
        wake();
      }
    } catch {
      // Cancelled by the test.
    }
    done = true;
    wake();
  })();
  const until = async (predicate: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return true;
  };
  // The `retry:` line comes first: the stream is open and subscribed.
  expect(await until(() => text.startsWith('retry:'), 5000)).toBe(true);
  const stream: Stream = {
    text: () => text,
    until: (predicate, ms) => until(() => predicate(text), ms),
    ended: (ms) => until(() => done, ms),
    cancel: () => reader.cancel().catch(() => undefined),
  };
  streams.push(stream);
  return stream;
}

async function postVisit(r: Running, path: string): Promise<void> {
  const response = await post(`${r.url}/visits`, r.poster, { request_path: path, request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } });
  expect(response.status).toBe(202);
}

/** A visit reaches the stream, the credential goes, and the stream ends without the visit stored after. */
async function expectEndsOnRevocation(r: Running, stream: Stream, revoke: () => Promise<void> | void, storeAfter: () => Promise<void> = () => postVisit(r, '/after-revocation')): Promise<void> {
  await postVisit(r, '/before-revocation');
  expect(await stream.until((text) => text.includes('"/before-revocation"'), 5000)).toBe(true);
  await revoke();
  await storeAfter();
  expect(await stream.ended(5000)).toBe(true);
  expect(stream.text()).not.toContain('/after-revocation');
  expect(stream.text().endsWith(REVOKED)).toBe(true);
}

async function adminRequest(r: Running, session: { cookie: string; csrf: string }, method: string, path: string, body?: unknown) {
  return fetch(`${r.url}${path}`, {
    method,
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function visit(path: string): EnrichedVisit {
  return { request_path: path, request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA }, received: Date.now(), time: Date.now(), agent_id: null, agent_type: null, result: 'unknown_agent', client_ip: null, referral: null };
}

describe('an admin session stream', () => {
  it("ends at logout, and another session's stream goes on", async () => {
    const r = await start();
    const [mine, other] = [await r.login(), await r.login()];
    const stream = await openStream(r, { cookie: mine.cookie }, `?project=${r.projectId}`);
    const otherStream = await openStream(r, { cookie: other.cookie }, `?project=${r.projectId}`);
    await expectEndsOnRevocation(r, stream, async () => {
      expect((await adminRequest(r, mine, 'POST', '/admin/logout')).status).toBe(204);
    });
    expect(await otherStream.until((text) => text.includes('"/after-revocation"'), 5000)).toBe(true);
  });

  it('ends when the admin secret is reset (AdminStore.resetSecret)', async () => {
    const r = await start();
    const session = await r.login();
    const stream = await openStream(r, { cookie: session.cookie }, `?project=${r.projectId}`);
    await expectEndsOnRevocation(r, stream, async () => {
      await r.admin.resetSecret();
    });
  });

  it('ends when another process resets the secret (agentwarden admin reset-password), at the next check', async () => {
    // A heartbeat far away: the check before the next event is what finds the reset.
    const r = await start({ heartbeatMs: 60_000, credentialCheckMs: 200 });
    const session = await r.login();
    const stream = await openStream(r, { cookie: session.cookie }, `?project=${r.projectId}`);
    await expectEndsOnRevocation(r, stream, async () => {
      // What the CLI does: its own AdminStore on the data directory, unseen by the server's.
      const cli = openAdminStore({ dataDir: r.dir, scrypt: FAST_SCRYPT });
      await cli.resetSecret();
      cli.close();
      await new Promise((resolve) => setTimeout(resolve, 250));
    });
  });

  it('ends, idle, within a heartbeat of another process resetting the secret', async () => {
    const r = await start({ heartbeatMs: 100, credentialCheckMs: 200 });
    const session = await r.login();
    const stream = await openStream(r, { cookie: session.cookie }, `?project=${r.projectId}`);
    const cli = openAdminStore({ dataDir: r.dir, scrypt: FAST_SCRYPT });
    await cli.resetSecret();
    cli.close();
    expect(await stream.ended(3000)).toBe(true);
    expect(stream.text().endsWith(REVOKED)).toBe(true);
  });

  it('ends when the project it reads is deleted', async () => {
    const r = await start();
    const session = await r.login();
    const stream = await openStream(r, { cookie: session.cookie }, `?project=${r.projectId}`);
    await expectEndsOnRevocation(
      r,
      stream,
      async () => {
        expect((await adminRequest(r, session, 'DELETE', `/admin/projects/${r.projectId}`)).status).toBe(204);
      },
      // No token opens the project any more: a visit still on its way is stored directly.
      async () => void (await r.store.append(r.projectId, [visit('/after-revocation')])),
    );
  });
});

describe('a project token stream', () => {
  it('ends when its token is revoked', async () => {
    const r = await start();
    const session = await r.login();
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    await expectEndsOnRevocation(r, stream, async () => {
      expect((await adminRequest(r, session, 'POST', '/admin/token-revocations', { token_id: r.tokenId })).status).toBe(200);
    });
  });

  it('ends when its token is rotated away', async () => {
    const r = await start();
    const session = await r.login();
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    let rotated = '';
    await expectEndsOnRevocation(
      r,
      stream,
      async () => {
        const response = await adminRequest(r, session, 'POST', '/admin/tokens', { project: r.projectId, revoke_others: true });
        expect(response.status).toBe(201);
        rotated = ((await response.json()) as { token: string }).token;
      },
      async () => {
        const response = await post(`${r.url}/visits`, rotated, { request_path: '/after-revocation', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } });
        expect(response.status).toBe(202);
      },
    );
  });

  it('ends when its project is deleted', async () => {
    const r = await start();
    const session = await r.login();
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    await expectEndsOnRevocation(
      r,
      stream,
      async () => {
        expect((await adminRequest(r, session, 'DELETE', `/admin/projects/${r.projectId}`)).status).toBe(204);
      },
      async () => void (await r.store.append(r.projectId, [visit('/after-revocation')])),
    );
  });

  it('ends when another process revokes its token (agentwarden project), at the next check', async () => {
    const r = await start({ heartbeatMs: 60_000, credentialCheckMs: 200 });
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    await expectEndsOnRevocation(r, stream, async () => {
      // The CLI's own store on the same file: the server's token version does not move.
      const cli = openSqliteStore({ dataDir: r.dir });
      expect(cli.revokeToken({ token: r.token })).toBe(true);
      cli.close();
      await new Promise((resolve) => setTimeout(resolve, 250));
    });
  });
});

describe('the credential check', () => {
  it('asks the token store about once a second however many visits a stream carries', async () => {
    // Lookups of the stream's token only: the poster's are the token cache's business.
    let streamHash = '';
    let lookups = 0;
    const r = await start({
      heartbeatMs: 60_000,
      projects: lookupWith((hash) => {
        if (hash === streamHash) lookups++;
      }),
    });
    streamHash = hashTokenNode(r.token);
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    const opened = lookups;
    const started = Date.now();
    // 400 visits in batches of 20 over some 1.5 s, each delivered to the stream.
    for (let batch = 0; batch < 20; batch++) {
      const items = Array.from({ length: 20 }, (_, i) => ({ request_path: `/busy-${batch}-${i}`, request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } }));
      expect((await post(`${r.url}/visits`, r.poster, items)).status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 75));
    }
    expect(await stream.until((text) => text.includes('"/busy-19-19"'), 5000)).toBe(true);
    const seconds = (Date.now() - started) / 1000;
    // About one ask a second (one more for the partial second), not 400.
    expect(lookups - opened).toBeGreaterThanOrEqual(1);
    expect(lookups - opened).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(stream.text().match(/^id: /gm)!.length).toBe(400);
  });

  it('keeps a stream open while the token store cannot answer, and ends it once the store answers revoked', async () => {
    let down = false;
    const r = await start({
      heartbeatMs: 100,
      credentialCheckMs: 100,
      projects: lookupWith(() => {
        if (down) throw new VisitStoreUnavailableError('unavailable', 1, 'the test took the store down');
      }),
    });
    const stream = await openStream(r, { authorization: `Bearer ${r.token}` });
    await postVisit(r, '/before-outage');
    down = true;
    // Several heartbeats and checks fail meanwhile; the stream stays and visits still arrive.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await r.store.append(r.projectId, [visit('/during-outage')]);
    expect(await stream.until((text) => text.includes('"/during-outage"'), 3000)).toBe(true);
    expect(await stream.ended(300)).toBe(false);
    // The store answers again, and the token was revoked meanwhile.
    r.store.revokeToken({ token: r.token });
    down = false;
    expect(await stream.ended(3000)).toBe(true);
    expect(stream.text().endsWith(REVOKED)).toBe(true);
  });

  it('keeps an admin stream open while the session store fails', async () => {
    let failing = false;
    const r = await start({
      heartbeatMs: 100,
      credentialCheckMs: 100,
      admin: (admin) => ({
        authenticate: (request) => {
          if (failing) throw new Error('SQLITE_BUSY: database is locked');
          return admin.authenticate(request);
        },
        findProject: (id) => admin.findProject(id),
        sessionsVersion: () => admin.sessionsVersion(),
      }),
    });
    const session = await r.login();
    const stream = await openStream(r, { cookie: session.cookie }, `?project=${r.projectId}`);
    failing = true;
    await new Promise((resolve) => setTimeout(resolve, 400));
    await postVisit(r, '/while-failing');
    expect(await stream.until((text) => text.includes('"/while-failing"'), 3000)).toBe(true);
    expect(await stream.ended(300)).toBe(false);
    failing = false;
    await postVisit(r, '/after-recovery');
    expect(await stream.until((text) => text.includes('"/after-recovery"'), 3000)).toBe(true);
  });
});
