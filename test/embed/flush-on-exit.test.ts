// A Node process with batched visits delivers them when it ends: when its event loop runs dry
// (beforeExit) and on SIGTERM, to a real agentwarden server (the child imports the built package).
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Runs a module as a child process; resolves with its exit code and signal once it has printed `ready` (and exited). */
function child(source: string, onReady?: (pid: number) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  proc.stdout.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('ready')) onReady?.(proc.pid!);
  });
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal, stderr })));
}

const script = (url: string, token: string, tail: string) => `
import { createHttpSink } from 'agentwarden';
import { flushOnExit } from 'agentwarden/node';
const sink = createHttpSink({ url: ${JSON.stringify(url)}, token: ${JSON.stringify(token)} }); // 30 s interval: nothing leaves on its own
flushOnExit(sink);
for (let i = 0; i < 25; i++) sink.push({ request_path: '/exit/' + i, request_method: 'GET', request_headers: { 'user-agent': 'GPTBot/1.2' } });
${tail}
`;

async function server(): Promise<{ srv: TestServer; token: string; projectId: string }> {
  const srv = await startTestServer();
  cleanups.push(() => srv.stop());
  const { id, token } = srv.store.createProject('exit.example');
  return { srv, token, projectId: id };
}

describe('flushOnExit', () => {
  it('delivers queued visits when the event loop runs dry', async () => {
    const { srv, token, projectId } = await server();
    const result = await child(script(srv.url, token, "console.log('ready');"));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(await srv.store.timeline({ projectId, limit: 100 })).toHaveLength(25);
  });

  it('delivers queued visits on SIGTERM, then ends the process by that signal', async () => {
    const { srv, token, projectId } = await server();
    // An open server keeps the loop busy: only the signal ends this process.
    const result = await child(script(srv.url, token, "const { createServer } = await import('node:http'); createServer().listen(0, '127.0.0.1', () => console.log('ready'));"), (pid) => process.kill(pid, 'SIGTERM'));
    expect(result.signal).toBe('SIGTERM');
    expect(await srv.store.timeline({ projectId, limit: 100 })).toHaveLength(25);
  });
});
