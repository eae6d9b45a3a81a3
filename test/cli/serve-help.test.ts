// `agentwarden serve --help`: every flag the command reads is documented with its environment
// variable, nothing documented is missing from the parser, and the text says what each store does.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/adapters/node/cli.js';
import { SERVE_FLAGS, serveCommand } from '../../src/adapters/node/commands/serve.js';
import { captureIo } from '../helpers/cli-io.js';

/** The option lines of the usage: `--name [VALUE]  ENV_VAR  text`. */
function documentedOptions(usage: string): Map<string, string | undefined> {
  const options = new Map<string, string | undefined>();
  for (const line of usage.split('\n')) {
    const name = /^ {2}--([a-z][a-z-]*)/.exec(line)?.[1];
    if (name !== undefined) options.set(name, /\s(AGENTWARDEN_[A-Z_]+)\s/.exec(line)?.[1]);
  }
  return options;
}

describe('agentwarden serve --help', () => {
  it('prints the usage and exits 0', async () => {
    const io = captureIo();
    expect(await main(['serve', '--help'], io)).toBe(0);
    expect(io.out() + io.err()).toContain('Usage: agentwarden serve [options]');
  });

  it('documents exactly the flags the command reads, each with its environment variable', () => {
    const documented = documentedOptions(serveCommand.usage);
    expect([...documented.keys()].sort()).toEqual(Object.keys(SERVE_FLAGS).sort());
    for (const [name, spec] of Object.entries(SERVE_FLAGS)) expect(documented.get(name), `--${name}`).toBe(spec.env);
  });

  it('says that --retention-days applies to ClickHouse too, in whole months, and which flags are SQLite-only', () => {
    const usage = serveCommand.usage;
    const retention = usage.slice(usage.indexOf('  --retention-days'), usage.indexOf('  --store'));
    expect(retention).toMatch(/ClickHouse/);
    expect(retention).toMatch(/whole months/);
    expect(retention).not.toMatch(/kept in SQLite/);
    const synchronous = usage.slice(usage.indexOf('  --synchronous'), usage.indexOf('  --catalog'));
    expect(synchronous).toMatch(/--store sqlite/);
    const dataDir = usage.slice(usage.indexOf('  --data-dir'), usage.indexOf('  --base-path'));
    expect(dataDir).toMatch(/clickhouse it holds only this server's admin sessions/);
    expect(serveCommand.summary).not.toMatch(/embedded SQLite store$/);
  });
});
