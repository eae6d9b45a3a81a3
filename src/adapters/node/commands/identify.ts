// `agentwarden identify`: reads a JSON headers object (or an array of them) on stdin and prints
// the identification result(s) as JSON, with no network.
import { createEngine } from '../../../index.js';
import { readAll, type Command } from './command.js';

export const identifyCommand: Command = {
  name: 'identify',
  summary: 'Identify the agent behind request headers read as JSON on stdin',
  usage: [
    'Usage: agentwarden identify < headers.json',
    '',
    'Reads a JSON object of request headers (names in any case, values string or string[])',
    'or an array of such objects, and prints the identification result(s) as JSON.',
    '',
    'Example:',
    `  echo '{"User-Agent":"Mozilla/5.0 (compatible; GPTBot/1.2)"}' | agentwarden identify`,
  ].join('\n'),
  async run(args, io) {
    if (args.length > 0) {
      io.stderr.write(`agentwarden identify: unexpected argument ${JSON.stringify(args[0])}\n${this.usage}\n`);
      return 2;
    }
    let input: unknown;
    try {
      input = JSON.parse(await readAll(io.stdin));
    } catch (error) {
      io.stderr.write(`agentwarden identify: stdin is not valid JSON: ${(error as Error).message}\n`);
      return 2;
    }
    const isHeaders = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
    if (!(isHeaders(input) || (Array.isArray(input) && input.every(isHeaders)))) {
      io.stderr.write('agentwarden identify: expected a JSON object of headers or an array of them\n');
      return 2;
    }
    const engine = createEngine();
    const result = Array.isArray(input)
      ? await engine.identifyMany(input.map((request_headers) => ({ request_headers })))
      : await engine.identify({ request_headers: input as Record<string, string> });
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  },
};
