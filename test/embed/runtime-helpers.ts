// Running sites the way their users do, for the runtime and example tests: a server script in its
// own process (Node, Deno, Bun) or a Worker bundled as Wrangler would and run by workerd through
// Miniflare. The runtimes are devDependencies installed from npm; in CI a missing one is a failure.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { expect } from 'vitest';
import type { StoredVisit, VisitStore } from '../../src/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The path of an npm-installed runtime binary (node_modules/.bin), or undefined when it is not
 * installed here.
 * @throws when CI=true and it is missing: CI installs every runtime (`npm ci`), so its absence is a failure there.
 */
export function runtimeBinary(name: 'deno' | 'bun'): string | undefined {
  const path = join(ROOT, 'node_modules', '.bin', name);
  if (existsSync(path)) return path;
  if (process.env['CI'] === 'true') throw new Error(`${name} is required in CI but ${path} is missing (a devDependency: npm ci installs it)`);
  console.warn(`${name} is not installed: skipping its tests (npm ci installs it)`);
  return undefined;
}

/** Miniflare (workerd), or undefined when it is not installed. @throws when CI=true and it is missing. */
export async function loadMiniflare(): Promise<typeof import('miniflare') | undefined> {
  try {
    return await import('miniflare');
  } catch (error) {
    if (process.env['CI'] === 'true') throw new Error(`miniflare is required in CI but cannot be loaded (a devDependency: npm ci installs it): ${String(error)}`);
    console.warn('miniflare is not installed: skipping the workerd tests (npm ci installs it)');
    return undefined;
  }
}

/** A site running in its own process. */
export interface RunningSite {
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
  /** Sends `signal` and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/** Kills whatever a failed test left running. */
export function killLeftovers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** How startSite finds the address a site prints: our examples' `listening on <url>` unless told. */
export interface StartOptions {
  readonly timeoutMs?: number;
  /** Its first group is the URL. */
  readonly listening?: RegExp;
  /** The working directory (default: the repository). */
  readonly cwd?: string;
}

/**
 * Starts `command args` and waits for it to print the address it listens on.
 * @throws when it exits first or prints nothing of the kind within the time limit (30 s).
 */
export async function startSite(command: string, args: readonly string[], env: Record<string, string>, options: StartOptions = {}): Promise<RunningSite> {
  const { timeoutMs = 30_000, listening = /listening on (http:\/\/[^\s/]+)/, cwd = ROOT } = options;
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`${command} ${args.join(' ')} did not start within ${timeoutMs} ms:\n${output}`))), timeoutMs);
    const poll = setInterval(() => {
      const found = listening.exec(output)?.[1];
      if (found === undefined) return;
      clearInterval(poll);
      clearTimeout(deadline);
      resolve(found);
    }, 20);
    void exited.then(({ code, signal }) => {
      clearInterval(poll);
      clearTimeout(deadline);
      reject(new Error(`${command} ${args.join(' ')} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    stop(signal = 'SIGTERM') {
      child.kill(signal);
      return exited;
    },
  };
}

/** The package as npm publishes it: `npm pack` of the dist/ that `npm test` built, into `dir`. */
export function packPackage(dir: string): { tarball: string; files: string[] } {
  // --ignore-scripts: dist/ is built already (prepack would build it again).
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as {
    filename: string;
    files: { path: string }[];
  }[];
  return { tarball: join(dir, packed[0]!.filename), files: packed[0]!.files.map((file) => file.path) };
}

/** Unpacks a packed tarball into `<project>/node_modules/agentwarden`, as npm installs one. */
export function unpackInto(tarball: string, project: string): void {
  const target = join(project, 'node_modules', 'agentwarden');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
}

/**
 * Bundles a Worker's entry point into one ES module, as Wrangler does (esbuild, the `workerd` and
 * `worker` export conditions). `agentwarden` resolves to the built package in dist/.
 */
export async function bundleWorker(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    alias: { agentwarden: join(ROOT, 'dist', 'index.js') },
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** Waits until the store holds `count` visits of the project (they arrive after the responses), and returns them newest first. */
export async function visitsArriving(store: VisitStore, projectId: string, count: number, timeoutMs = 15_000): Promise<readonly StoredVisit[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const visits = await store.timeline({ projectId, limit: 100 });
    if (visits.length >= count || Date.now() > deadline) {
      expect(visits).toHaveLength(count);
      return visits;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
