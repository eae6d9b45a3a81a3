// The `agentwarden` command line: dispatches to one command per file under commands/.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Command, CommandIo } from './commands/command.js';
import { identifyCommand } from './commands/identify.js';
import { refreshIpRangesCommand } from './commands/refresh-ip-ranges.js';
import { robotsCommand } from './commands/robots.js';
import { serveCommand } from './commands/serve.js';
import { projectCommand } from './commands/project.js';
import { adminCommand } from './commands/admin.js';

const COMMANDS: readonly Command[] = [identifyCommand, refreshIpRangesCommand, serveCommand, projectCommand, robotsCommand, adminCommand];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'agentwarden: tell a website who its automated visitors are.',
    '',
    'Usage: agentwarden <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "agentwarden <command> --help" for the options of one command.',
  ].join('\n');
}

/** Runs the CLI with the given arguments (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    // Asked for, help is the output; with no command at all it is a usage error, on stderr.
    (name === undefined ? io.stderr : io.stdout).write(`${help()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr.write(`agentwarden: unknown command ${JSON.stringify(name)}\n\n${help()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.usage}\n`);
    return 0;
  }
  return command.run(rest, io);
}

/** Whether this module is the process entry point (also through the npm bin symlink). */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

// Run only as a program: tests import main() without side effects.
if (isEntryPoint()) {
  // A reader of stdout that went away (serve | head -1, a log pipe restarted) must not end the
  // server mid-request with an unhandled EPIPE: what is written after is dropped.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`agentwarden: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
