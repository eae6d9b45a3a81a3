// Typed validation errors of robots.txt options: a list of issues, each at a JSON pointer, with a closed code.

/** Why an option was rejected (closed set, so the REST layer and callers can switch on it). */
export type RobotsIssueCode =
  | 'not-an-object'
  | 'missing'
  | 'invalid-type'
  | 'empty'
  | 'unknown-agent-type'
  | 'unknown-agent'
  | 'conflicting-agent'
  | 'unsupported-field'
  | 'invalid-path'
  | 'control-character'
  | 'invalid-unicode'
  | 'too-long'
  | 'too-many'
  | 'output-too-large';

/** One rejected option: where (RFC 6901 JSON pointer into the options object), why, and a message for people. */
export interface RobotsIssue {
  readonly path: string;
  readonly code: RobotsIssueCode;
  readonly message: string;
}

/**
 * Thrown when robots.txt options are invalid or the text would exceed RFC 9309's 500 KiB parse limit.
 * Carries every issue found, so a 400 response can name them all.
 * @example
 * try { engine.robotsTxt({ agent_types: ['Nope'] }); }
 * catch (error) { if (error instanceof RobotsOptionsError) error.issues; // [{ path: '/agent_types/0', code: 'unknown-agent-type', ... }] }
 */
export class RobotsOptionsError extends RangeError {
  readonly issues: readonly RobotsIssue[];

  constructor(issues: readonly RobotsIssue[]) {
    const first = issues[0];
    const summary = first === undefined ? 'invalid robots.txt options' : `${first.path || '(options)'}: ${first.message}`;
    super(issues.length > 1 ? `${summary} (and ${issues.length - 1} more)` : summary);
    this.name = 'RobotsOptionsError';
    this.issues = issues;
  }
}

/** A short, escaped rendering of a rejected value for messages (JSON escapes control characters). */
export function preview(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
