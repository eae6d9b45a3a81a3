// The WordPress plugin's endpoints: its visit log (gzipped NDJSON, POST /logs/wordpress) is stored
// like POST /visits, line by line, within a decompressed-size cap; GET /user says what this server
// does for the plugin. Written from the plugin's wire format (known-agents-api.md §1.3, §1.6) and
// checked against plugin 1.28.0's includes/analytics.php (the fields, gmdate('c') times, PHP's
// escaped slashes and float durations, gzencode level 6, text/plain with Content-Encoding: gzip).
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore } from '../../src/index.js';
import { WORDPRESS_LOG_MAX_BYTES, WORDPRESS_LOG_MAX_VISITS } from '../../src/api/wordpress-routes.js';
import { GPTBOT_UA } from '../server/helpers.js';

const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** One line of the plugin's log: the /visits fields plus its own (analytics.php). */
const line = (path: string, ua: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    request_path: path,
    request_method: 'GET',
    request_headers: { 'User-Agent': ua, 'X-Forwarded-For': '203.0.113.9', Host: 'blog.example' },
    response_status_code: 200,
    response_headers: { 'Content-Type': 'text/html; charset=UTF-8' },
    created: '2026-11-27T10:00:00.000Z',
    is_blocked: false,
    wordpress_plugin_version: '1.28.0',
    ...extra,
  });

async function setup() {
  const projects = createMemoryProjectStore();
  const { token, id: projectId } = await projects.createProject('blog');
  const visits = createMemoryVisitStore();
  const handler = createApiHandler({ engine: createEngine(), projects, visits, rateLimit: false });
  const send = async (body: Uint8Array | string, headers: Record<string, string> = { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, auth = `Bearer ${token}`) => {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    const response = await handler({ method: 'POST', path: '/logs/wordpress', headers: { authorization: auth, ...headers }, body: bytes });
    return { status: response.status, headers: response.headers, json: JSON.parse(response.body as string) as Record<string, any> };
  };
  const stored = () => visits.timeline({ projectId, limit: 100 });
  return { handler, token, send, stored };
}

describe('POST /logs/wordpress', () => {
  it("stores each line of the plugin's gzipped NDJSON log as a visit, identified, with its response and decision", async () => {
    const { send, stored } = await setup();
    const log = [line('/hello-world/', GPTBOT_UA), line('/', CHROME_UA, { is_blocked: true }), line('/feed/', GPTBOT_UA)].join('\n') + '\n';
    const answer = await send(gzipSync(log));
    expect(answer).toMatchObject({ status: 202, json: { accepted: 3, rejected: [] } });
    const visits = await stored();
    expect(visits.map((v) => [v.request_path, v.agent_id, v.response_status_code]).sort()).toEqual([
      ['/', null, 200],
      ['/feed/', 'gptbot', 200],
      ['/hello-world/', 'gptbot', 200],
    ]);
    expect(visits.find((v) => v.request_path === '/')?.is_blocked).toBe(true);
  });

  it('stores a line exactly as plugin 1.28.0 writes it: escaped slashes, a float duration, an offset time', async () => {
    const { send, stored } = await setup();
    const php =
      '{"request_path":"\\/hello-world\\/?replytocom=7","request_method":"GET","request_headers":{"User-Agent":"' +
      GPTBOT_UA.replaceAll('/', '\\/') +
      '","X-Forwarded-For":"203.0.113.9"},"is_blocked":false,"response_status_code":200,"response_headers":{"Content-Type":"text\\/html; charset=UTF-8"},' +
      '"response_duration_in_milliseconds":123.0,"wordpress_plugin_version":"1.28.0","created":"2026-11-27T10:00:00+00:00"}\n';
    expect(await send(gzipSync(php, { level: 6 }))).toMatchObject({ status: 202, json: { accepted: 1, rejected: [] } });
    const [visit] = await stored();
    expect(visit).toMatchObject({ request_path: '/hello-world/?replytocom=7', agent_id: 'gptbot', response_status_code: 200, response_duration_in_milliseconds: 123, is_blocked: false, created: '2026-11-27T10:00:00.000Z' });
  });

  it('refuses a line that is not JSON or not a visit by its index, and stores the others', async () => {
    const { send, stored } = await setup();
    const log = [line('/a', GPTBOT_UA), '{"request_path": "/b", ', JSON.stringify({ request_method: 'GET', request_headers: {} }), '', line('/d', CHROME_UA)].join('\r\n');
    const answer = await send(gzipSync(log));
    expect(answer.status).toBe(202);
    expect(answer.json['accepted']).toBe(2);
    expect(answer.json['rejected']).toEqual([
      { index: 1, errors: [expect.objectContaining({ pointer: '/1', code: 'invalid-json' })] },
      { index: 2, errors: [expect.objectContaining({ pointer: '/2/request_path' })] },
    ]);
    expect((await stored()).map((v) => v.request_path).sort()).toEqual(['/a', '/d']);
  });

  // The plugin empties its log before it posts it and never reads the answer: a log refused whole
  // is lost whole. A visitor of the site could make that happen every 30 s with one oversized
  // request (a 64 KiB header), or a client with one line of bad bytes.
  it('refuses a line past the per-visit size limits, or not UTF-8, by its index and stores the others', async () => {
    const { send, stored } = await setup();
    const good = Array.from({ length: 1000 }, (_, i) => line(`/ok/${i}`, CHROME_UA));
    const longHeaders = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`X-Long-${i}`, 'v'.repeat(8000)]));
    const manyHeaders = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`X-H-${i}`, 'v']));
    const oversized = JSON.stringify({ request_path: '/long', request_method: 'GET', request_headers: { 'User-Agent': CHROME_UA, ...longHeaders } });
    const crowded = JSON.stringify({ request_path: '/many', request_method: 'GET', request_headers: manyHeaders });
    const log = Buffer.concat([Buffer.from([...good.slice(0, 500), oversized, crowded].join('\n') + '\n'), Buffer.from([0x7b, 0xe9, 0x7d, 0x0a]), Buffer.from(good.slice(500).join('\n'))]);
    const answer = await send(gzipSync(log));
    expect(answer.status).toBe(202);
    expect(answer.json['accepted']).toBe(1000);
    expect(answer.json['rejected']).toEqual([
      { index: 500, errors: [expect.objectContaining({ pointer: '/500/request_headers', code: 'max-header-size' })] },
      { index: 501, errors: [expect.objectContaining({ pointer: '/501/request_headers', code: 'max-headers' })] },
      { index: 502, errors: [expect.objectContaining({ pointer: '/502', code: 'invalid-utf8' })] },
    ]);
    expect(await stored()).toHaveLength(100);
  });

  it("answers a log of visits with hundreds of bad fields each in a body smaller than the log (each error listed once, the first ones)", async () => {
    const { send, stored } = await setup();
    const bad = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`h${i}`, 0]));
    const one = JSON.stringify({ request_path: '/x', request_method: 'GET', request_headers: bad, response_headers: bad });
    const log = `${one}\n`.repeat(1000);
    const answer = await send(gzipSync(log));
    expect(answer.status).toBe(400);
    const size = JSON.stringify(answer.json).length;
    // It once answered 487 MB for 16 MiB of such lines.
    expect(size).toBeLessThan(log.length);
    expect(answer.json['rejected']).toHaveLength(1000);
    expect(answer.json['rejected'][0].errors.length).toBeLessThanOrEqual(22);
    expect(answer.json['rejected'][0].errors).toContainEqual(expect.objectContaining({ pointer: '/0/request_headers', code: 'more-errors' }));
    expect(answer.json['rejected'][999].errors).toHaveLength(1);
    expect(answer.json['errors'].length).toBeLessThanOrEqual(1000);
    expect(await stored()).toEqual([]);
  });

  it("takes PHP's empty header list ([]) as no headers, and refuses MCP fields past their bounds by index", async () => {
    const { send, stored } = await setup();
    const php = JSON.stringify({ request_path: '/php', request_method: 'GET', request_headers: { 'User-Agent': CHROME_UA }, response_headers: [] });
    const mcp = line('/mcp', CHROME_UA, { mcp_request_method: 'x'.repeat(5000) });
    const acp = line('/acp', CHROME_UA, { acp_response_body: { note: 'y'.repeat(70_000) } });
    const answer = await send(gzipSync([php, mcp, acp, line('/fine', CHROME_UA, { mcp_request_method: 'tools/call' })].join('\n')));
    expect(answer.status).toBe(202);
    expect(answer.json['rejected']).toEqual([
      { index: 1, errors: [expect.objectContaining({ pointer: '/1/mcp_request_method', code: 'max-length' })] },
      { index: 2, errors: [expect.objectContaining({ pointer: '/2/acp_response_body', code: 'max-length' })] },
    ]);
    expect((await stored()).map((v) => v.request_path).sort()).toEqual(['/fine', '/php']);
  });

  it('takes a log sent uncompressed, or as application/x-ndjson', async () => {
    const { send } = await setup();
    expect((await send(line('/plain', CHROME_UA), { 'content-type': 'text/plain' })).json).toEqual({ accepted: 1, rejected: [] });
    expect((await send(gzipSync(line('/nd', CHROME_UA)), { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-encoding': 'gzip' })).json).toEqual({ accepted: 1, rejected: [] });
  });

  it('refuses a gzip bomb once past the decompressed cap, storing nothing', async () => {
    const { send, stored } = await setup();
    // 17 MiB of one repeated visit line: about 60 KiB compressed.
    const one = `${line('/bomb', CHROME_UA)}\n`;
    const bomb = gzipSync(one.repeat(Math.ceil((WORDPRESS_LOG_MAX_BYTES + 1024 * 1024) / one.length)));
    expect(bomb.byteLength).toBeLessThan(200 * 1024);
    const answer = await send(bomb);
    expect(answer.status).toBe(413);
    expect(answer.json['detail']).toContain(`${WORDPRESS_LOG_MAX_BYTES} bytes once decompressed`);
    expect(await stored()).toEqual([]);
  });

  it('refuses a log of more visits than one request may carry', async () => {
    const { send, stored } = await setup();
    const answer = await send(gzipSync('{}\n'.repeat(WORDPRESS_LOG_MAX_VISITS + 1)));
    expect(answer).toMatchObject({ status: 413, json: { errors: [{ code: 'max-items' }] } });
    expect(await stored()).toEqual([]);
  });

  it('answers bad bodies and headers with a problem naming what is wrong', async () => {
    const { send, handler } = await setup();
    expect(await send('not gzip at all')).toMatchObject({ status: 400, json: { detail: expect.stringContaining('not valid gzip') } });
    expect(await send(gzipSync(line('/cut', CHROME_UA)).subarray(0, 40))).toMatchObject({ status: 400 });
    expect(await send(gzipSync(Buffer.from([0xff, 0xfe, 0x0a])))).toMatchObject({ status: 400, json: { rejected: [{ index: 0, errors: [{ code: 'invalid-utf8' }] }] } });
    expect(await send('not gzip at all')).toMatchObject({ json: { errors: [{ pointer: '', code: 'invalid-gzip' }] } });
    expect(await send('', { 'content-type': 'text/plain' })).toMatchObject({ json: { errors: [{ pointer: '', code: 'empty' }] } });
    expect(await send(gzipSync(line('/x', CHROME_UA)), { 'content-type': 'application/xml', 'content-encoding': 'gzip' })).toMatchObject({
      status: 415,
      headers: { 'accept-post': 'text/plain, application/x-ndjson' },
      json: { errors: [{ pointer: '', header: 'Content-Type', code: 'media-type' }] },
    });
    expect(await send(line('/x', CHROME_UA), { 'content-type': 'text/plain', 'content-encoding': 'br' })).toMatchObject({
      status: 415,
      headers: { 'accept-encoding': 'gzip, identity' },
      json: { errors: [{ pointer: '', header: 'Content-Encoding', code: 'content-coding' }] },
    });
    expect(await send('', { 'content-type': 'text/plain' })).toMatchObject({ status: 400 });
    expect(await send(gzipSync(`${'['.repeat(200)}\n${line('/deep', CHROME_UA)}`))).toMatchObject({ status: 202, json: { accepted: 1, rejected: [{ index: 0, errors: [{ code: 'too-deep' }] }] } });
    expect((await send(gzipSync(line('/x', CHROME_UA)), undefined, 'Bearer aw_wrong')).status).toBe(401);
    const noToken = await handler({ method: 'POST', path: '/logs/wordpress', headers: { 'content-type': 'text/plain' }, body: new TextEncoder().encode(line('/x', CHROME_UA)) });
    expect(noToken.status).toBe(401);
  });
});

describe('POST /logs/wordpress, hostile bodies', () => {
  it('answers any bytes, and any corruption of a valid gzip log, with 202, 400 or 413: never an error of its own', async () => {
    const { send } = await setup();
    const valid = gzipSync([line('/a', GPTBOT_UA), line('/b', CHROME_UA)].join('\n'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }),
          // A valid log with bytes flipped or cut: headers, deflate blocks, the CRC and length trailer.
          fc.tuple(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 })), { maxLength: 4 }), fc.nat(valid.length)).map(([flips, cut]) => {
            const bytes = Uint8Array.from(valid);
            for (const [at, mask] of flips) bytes[at]! ^= mask;
            return bytes.subarray(0, Math.max(1, cut));
          }),
        ),
        async (body) => {
          const answer = await send(body);
          expect([202, 400, 413]).toContain(answer.status);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('POST /logs/wordpress, several at once', () => {
  it("decompresses and stores one log of a project at a time, and two over all projects: one project's queue does not hold up another's log", async () => {
    const projects = createMemoryProjectStore();
    const { token } = await projects.createProject('blog');
    const other = await projects.createProject('other blog');
    const third = await projects.createProject('third blog');
    const memory = createMemoryVisitStore();
    // A store whose appends wait until released: the second log must not be read while the first is being stored.
    const appends: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const visits = Object.assign(Object.create(memory) as typeof memory, {
      async append(projectId: string, batch: Parameters<typeof memory.append>[1]) {
        appends.push(batch.map((v) => v.request_path).join(','));
        await gate;
        return memory.append(projectId, batch);
      },
    });
    const handler = createApiHandler({ engine: createEngine(), projects, visits, rateLimit: false });
    const post = (path: string, as = token) => handler({ method: 'POST', path: '/logs/wordpress', headers: { authorization: `Bearer ${as}`, 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: gzipSync(line(path, CHROME_UA)) });
    const first = post('/first');
    const second = post('/second');
    const another = post('/another', other.token);
    const yetAnother = post('/yet-another', third.token);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The project's first log is being stored and its second waits unread; the other project's
    // log took the second place, and the third project's waits for a place.
    expect([...appends].sort()).toEqual(['/another', '/first']);
    release();
    for (const answer of await Promise.all([first, second, another, yetAnother])) expect(answer.status).toBe(202);
    expect([...appends].sort()).toEqual(['/another', '/first', '/second', '/yet-another']);
  });
});

describe("the plugin's robots.txt request", () => {
  it('is answered with its body as plugin 1.28.0 sends it (includes/variables.php), its own version field included', async () => {
    const { handler, token } = await setup();
    const body = { disallow: '/', agent_types: ['AI Assistant', 'AI Data Scraper', 'AI Search Crawler', 'Archiver', 'Intelligence Gatherer', 'Scraper', 'SEO Crawler', 'Undocumented AI Agent'], wordpress_plugin_version: '1.28.0' };
    const response = await handler({ method: 'POST', path: '/robots-txts', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify(body)) });
    expect(response.status).toBe(200);
    expect(response.body).toContain('User-agent: GPTBot\nDisallow: /\n');
    expect(response.body).toContain('User-agent: ChatGPT-User\nDisallow: /\n');
  });
});

describe('GET /user', () => {
  it('tells the plugin that this server takes its visits and serves its blocking list', async () => {
    const { handler, token } = await setup();
    const response = await handler({ method: 'GET', path: '/user', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body as string)).toEqual({ is_analytics_allowed: true, is_robots_txt_enforcement_allowed: true, analytics_script_tag: '' });
    expect((await handler({ method: 'GET', path: '/user', headers: {} })).status).toBe(401);
  });
});

describe('POST /user-agent-strings-lists', () => {
  const BYTESPIDER_UA = 'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)';
  const CLAUDE_USER_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';

  async function withVisits() {
    const projects = createMemoryProjectStore();
    const { token, id: projectId } = await projects.createProject('blog');
    const visits = createMemoryVisitStore();
    const handler = createApiHandler({ engine: createEngine(), projects, visits, rateLimit: false });
    const post = (path: string, body: unknown) => handler({ method: 'POST', path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify(body)) });
    const visit = (ua: string) => ({ request_path: '/', request_method: 'GET', request_headers: { 'user-agent': ua } });
    expect((await post('/visits', [visit(GPTBOT_UA), visit(GPTBOT_UA), visit(BYTESPIDER_UA), visit(CLAUDE_USER_UA), visit(CHROME_UA)])).status).toBe(202);
    const list = async (agentTypes: unknown) => {
      const response = await post('/user-agent-strings-lists', { agent_types: agentTypes, wordpress_plugin_version: '1.28.0' });
      return { status: response.status, json: JSON.parse(response.body as string) as unknown };
    };
    return { visits, projectId, list };
  }

  it("answers the whole User-Agent strings this project's agents of the chosen types sent, once each", async () => {
    const { list } = await withVisits();
    expect(await list(['AI Data Scraper'])).toEqual({ status: 200, json: [BYTESPIDER_UA, GPTBOT_UA].sort() });
    expect(await list(['AI Assistant', 'AI Data Scraper', 'AI Assistant'])).toEqual({ status: 200, json: [BYTESPIDER_UA, CLAUDE_USER_UA, GPTBOT_UA].sort() });
    expect(await list(['Search Engine Crawler'])).toEqual({ status: 200, json: [] });
  });

  it("leaves out a string that does not name the agent by itself: a browser's header an agent known by its signature sent", async () => {
    const { visits, projectId, list } = await withVisits();
    const [stored] = await visits.timeline({ projectId, limit: 1, filter: { agent_id: 'gptbot' } });
    // As the ChatGPT agent's visits are stored: Chrome's header, identified by Web Bot Auth.
    await visits.append(projectId, [{ ...stored!, request_headers: { 'user-agent': CHROME_UA }, agent_id: 'chatgpt-agent', agent_type: 'AI Agent' }]);
    expect((await list(['AI Agent'])).json).toEqual([]);
  });

  it('refuses agent_types that are missing, empty or name no type, naming the item', async () => {
    const { list } = await withVisits();
    expect(await list([])).toMatchObject({ status: 400 });
    expect(await list(undefined)).toMatchObject({ status: 400 });
    expect(await list(['AI Data Scraper', 'Robots'])).toMatchObject({ status: 400, json: { errors: [{ pointer: '/agent_types/1' }] } });
  });

  it('refuses agent_types past 1,000 items with 413 max-items, as every array of the API (DESIGN.md §7)', async () => {
    const { list } = await withVisits();
    expect((await list(Array(1000).fill('AI Data Scraper'))).status).toBe(200);
    expect(await list(Array(1001).fill('AI Data Scraper'))).toEqual({
      status: 413,
      json: expect.objectContaining({ type: 'urn:agentwarden:problem:payload-too-large', errors: [{ pointer: '/agent_types', code: 'max-items', message: 'at most 1000 items' }] }),
    });
    // The limit is the API's, configured once (limits.maxItems).
    const projects = createMemoryProjectStore();
    const { token } = await projects.createProject('small');
    const handler = createApiHandler({ engine: createEngine(), projects, visits: createMemoryVisitStore(), rateLimit: false, limits: { maxItems: 2 } });
    const body = new TextEncoder().encode(JSON.stringify({ agent_types: ['AI Assistant', 'AI Agent', 'AI Search Crawler'] }));
    const small = await handler({ method: 'POST', path: '/user-agent-strings-lists', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    expect(small.status).toBe(413);
  });
});
