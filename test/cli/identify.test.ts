// The CLI: --help, and `identify` reading headers as JSON on stdin.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/adapters/node/cli.js';
import { captureIo } from '../helpers/cli-io.js';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

describe('agentwarden CLI', () => {
  it('--help lists the commands and exits 0', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out()).toMatch(/Usage: agentwarden <command>/);
    expect(io.out()).toMatch(/identify/);
  });

  it('an unknown command exits 2 with a message', async () => {
    const io = captureIo();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.err()).toMatch(/unknown command "frobnicate"/);
  });

  it('identify prints the identification of a headers object', async () => {
    const io = captureIo(JSON.stringify({ 'User-Agent': GPTBOT }));
    expect(await main(['identify'], io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ result: 'not_verifiable', agent_id: 'gptbot', agent_token: 'GPTBot' });
  });

  it('identify accepts an array and keeps its order', async () => {
    const io = captureIo(JSON.stringify([{ 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' }, { 'user-agent': GPTBOT }]));
    expect(await main(['identify'], io)).toBe(0);
    expect((JSON.parse(io.out()) as { result: string }[]).map((r) => r.result)).toEqual(['unknown_agent', 'not_verifiable']);
  });

  it('identify rejects invalid JSON and non-object input with exit 2', async () => {
    for (const input of ['{not json', '"a string"', '[1,2]']) {
      const io = captureIo(input);
      expect(await main(['identify'], io)).toBe(2);
      expect(io.err()).toMatch(/agentwarden identify:/);
      expect(io.out()).toBe('');
    }
  });

  it('the built binary runs as a program (dist/cli.js)', () => {
    const out = execFileSync(process.execPath, [join(import.meta.dirname, '..', '..', 'dist', 'cli.js'), 'identify'], {
      input: JSON.stringify({ 'user-agent': GPTBOT }),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toMatchObject({ agent_id: 'gptbot' });
  });
});
