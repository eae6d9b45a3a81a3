// In-memory stdin/stdout/stderr for driving CLI commands in-process.
import { PassThrough, Readable } from 'node:stream';
import type { CommandIo } from '../../src/adapters/node/index.js';

/** Streams for one CLI run plus accessors for what it wrote. */
export interface CapturedIo extends CommandIo {
  out(): string;
  err(): string;
}

/** Builds CLI streams whose stdin yields `input` and whose outputs are captured. */
export function captureIo(input = '', env: NodeJS.ProcessEnv = {}): CapturedIo {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const outChunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => outChunks.push(chunk));
  stderr.on('data', (chunk: Buffer) => errChunks.push(chunk));
  return {
    stdin: Readable.from([Buffer.from(input)]),
    stdout,
    stderr,
    env,
    out: () => Buffer.concat(outChunks).toString('utf8'),
    err: () => Buffer.concat(errChunks).toString('utf8'),
  };
}
