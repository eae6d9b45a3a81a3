// The shape every CLI command has, so adding one is a new file plus one line in cli.ts.

/** Streams and environment a command runs with, injected so tests can drive commands in-process. */
export interface CommandIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
}

/** One `agentwarden <name>` command. */
export interface Command {
  readonly name: string;
  /** One line for `agentwarden --help`. */
  readonly summary: string;
  /** The full usage text for `agentwarden <name> --help`. */
  readonly usage: string;
  /** Runs the command; resolves to the process exit code. */
  run(args: readonly string[], io: CommandIo): Promise<number>;
}

/** Reads a whole stream as UTF-8 text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
