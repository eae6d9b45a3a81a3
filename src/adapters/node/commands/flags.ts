// Command-line flags: `--name value`, `--name=value` and boolean `--name`, each with an
// AGENTWARDEN_* environment fallback, parsed against a declared set so typos are errors.

/** How one flag is read: a string value or a boolean switch, and its environment variable. */
export interface FlagSpec {
  readonly kind: 'string' | 'boolean';
  /** e.g. `AGENTWARDEN_PORT`; the flag wins when both are given. */
  readonly env?: string;
}

/** Parsed flags (strings, or 'true' for a set boolean) and the positional arguments. */
export interface ParsedFlags {
  readonly values: Readonly<Record<string, string | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses arguments against a flag table; returns an error message for an unknown flag or a
 * missing value.
 */
export function parseFlags(args: readonly string[], specs: Readonly<Record<string, FlagSpec>>, env: NodeJS.ProcessEnv): ParsedFlags | string {
  const values: Record<string, string | undefined> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = specs[name];
    if (spec === undefined) return `unknown option --${name}`;
    if (spec.kind === 'boolean') {
      if (eq !== -1) return `--${name} takes no value`;
      values[name] = 'true';
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) return `--${name} needs a value`;
    // "--data-dir --log-requests" forgot the directory: the next option is no value (write --name=--x to mean one).
    if (eq === -1 && value.startsWith('--')) return `--${name} needs a value, got the option ${value}`;
    values[name] = value;
  }
  for (const [name, spec] of Object.entries(specs)) {
    const fromEnv = spec.env === undefined ? undefined : env[spec.env];
    if (values[name] !== undefined || fromEnv === undefined || fromEnv === '') continue;
    if (spec.kind === 'string') values[name] = fromEnv;
    else {
      // A switch from the environment: the usual spellings, never a silent false for "1" or "yes".
      if (/^(?:true|1|yes|on)$/i.test(fromEnv.trim())) values[name] = 'true';
      else if (!/^(?:false|0|no|off)$/i.test(fromEnv.trim())) return `${spec.env} must be true or false (or 1/0, yes/no, on/off), got ${JSON.stringify(fromEnv)}`;
    }
  }
  return { values, positionals };
}

/** Reads an integer flag within bounds; returns an error message when it is not one. */
export function integerFlag(name: string, value: string | undefined, fallback: number, min: number, max: number): number | string {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) return `--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`;
  return n;
}
