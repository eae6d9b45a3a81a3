// The `agentwarden` command line: dispatches to one command per file under commands/.
import type { Command, CommandIo } from './commands/command.js';
import { identifyCommand } from './commands/identify.js';

const COMMANDS: readonly Command[] = [identifyCommand];

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
    io.stdout.write(`${help()}\n`);
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

main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agentwarden: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
