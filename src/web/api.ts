// The dashboard's client of the admin and read APIs: same-origin fetches with the session cookie,
// the CSRF token on every state-changing request, and problem+json errors as ApiError.

/** A failed API call: the HTTP status and the problem's detail. */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: readonly { pointer: string; message: string }[];
  constructor(status: number, message: string, errors: readonly { pointer: string; message: string }[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.errors = errors;
  }
}

/**
 * What a failed call says to a person: the problem's detail with its field errors' own words in
 * place of "see errors" (which points at a list the page does not show), or the error as text.
 * @example
 * errorText(new ApiError(400, 'The field "name" is invalid; see errors.', [{ pointer: '/name', message: 'name must be a non-empty string' }]));
 * // 'The field "name" is invalid: name must be a non-empty string'
 */
export function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return String(error);
  if (error.errors.length === 0) return error.message;
  const messages = error.errors.map((e) => e.message).join('; ');
  const lead = error.message.replace(/[;,]? ?see errors\.?$/, '');
  return lead === error.message ? `${error.message} ${messages}` : `${lead}: ${messages}`;
}

// The page lives at <base>/ui/; the API at <base>/.
const apiRoot = new URL('../', window.location.href);
let csrfToken: string | undefined;
let onUnauthorized: () => void = () => undefined;

/** Sets what happens when the session is gone (show the login form). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/** Remembers the session's CSRF token (from login or GET /admin/session). */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** The absolute URL of an API path with query parameters (undefined values are left out). */
export function apiUrl(path: string, params: Record<string, string | number | undefined> = {}): string {
  const url = new URL(path.replace(/^\//, ''), apiRoot);
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
  return url.href;
}

async function failure(response: Response): Promise<ApiError> {
  let detail = `${response.status} ${response.statusText}`;
  let errors: { pointer: string; message: string }[] = [];
  try {
    const body = (await response.json()) as { detail?: string; errors?: { pointer: string; message: string }[] };
    if (typeof body.detail === 'string') detail = body.detail;
    if (Array.isArray(body.errors)) errors = body.errors;
  } catch {
    // Not problem+json: the status line says enough.
  }
  return new ApiError(response.status, detail, errors);
}

/** The answer of `pending`, or `fallback` when the API answers 404 (a resource it does not have). */
export function orIfNotFound<T, F>(pending: Promise<T>, fallback: F): Promise<T | F> {
  return pending.catch((error: unknown) => {
    if (error instanceof ApiError && error.status === 404) return fallback;
    throw error;
  });
}

/**
 * Calls the API and returns the parsed JSON (or text for text responses).
 * @throws {ApiError} for any non-2xx answer; a 401 also calls the unauthorized handler.
 */
export async function request<T>(method: string, path: string, options: { params?: Record<string, string | number | undefined>; body?: unknown; text?: boolean; quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: options.text === true ? 'text/plain' : 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(apiUrl(path, options.params), {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401 && options.quiet401 !== true) onUnauthorized();
    throw error;
  }
  if (response.status === 204) return undefined as T;
  return (options.text === true ? await response.text() : await response.json()) as T;
}

/** A token as the admin API lists it (never the token itself). */
export interface TokenInfo {
  readonly id: string;
  readonly prefix: string;
  readonly created: string;
  readonly revoked: string | null;
}

/** A project as the admin API lists it. */
export interface ProjectInfo {
  readonly id: string;
  readonly name: string;
  readonly created: string;
  readonly tokens: readonly TokenInfo[];
}

/** One verification check: which method, what it concluded and why. */
export interface CheckJson {
  readonly method: string;
  readonly outcome: 'pass' | 'fail' | 'inconclusive';
  readonly reason: string;
}

/** A visit as the read API returns it (see the /visits contract); optional members appear when known. */
export interface VisitJson {
  readonly id: string;
  readonly time: string;
  readonly received: string;
  readonly agent_id: string | null;
  readonly agent_name: string | null;
  readonly agent_type: string | null;
  readonly result: string;
  readonly client_ip: string | null;
  readonly client_ip_header?: string;
  readonly referral: string | null;
  readonly request_path: string;
  readonly request_method: string;
  readonly request_headers: Readonly<Record<string, string>>;
  readonly response_status_code?: number;
  readonly response_headers?: Readonly<Record<string, string>>;
  readonly response_duration_in_milliseconds?: number;
  readonly created?: string;
  readonly verification?: { readonly method: string | null; readonly checks: readonly CheckJson[] };
  /** The site's own access policy, when its middleware recorded one. */
  readonly decision?: { readonly rule?: string; readonly action?: string; readonly report_only?: boolean } & Readonly<Record<string, unknown>>;
  readonly is_blocked?: boolean;
  readonly [field: string]: unknown;
}

/** A catalog agent (GET /agents). */
export interface CatalogAgentJson {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly operator: string;
  readonly url: string;
  readonly description: string | null;
  readonly robots_tokens: readonly string[];
  readonly verification_methods: readonly string[];
  readonly signature_agents: readonly string[];
  readonly reverse_dns: readonly string[];
  readonly respects_robots_txt: boolean | null;
  /** False for an unlisted bot or an attack probe: robots.txt rules cannot name it. */
  readonly listed: boolean;
}

/** GET /agents. */
export interface AgentPageJson {
  readonly total: number;
  readonly agents: readonly CatalogAgentJson[];
  readonly next_offset: number | null;
}

/** GET /stats/agents/{id}. */
export interface AgentActivityJson {
  readonly visits: number;
  readonly results: Readonly<Record<string, number>>;
  readonly first_seen: string | null;
  readonly last_seen: string | null;
}

/** GET /stats/status-codes. */
export interface StatusCodesJson {
  readonly statuses: readonly (string | null)[];
  readonly agents: readonly { agent_id: string; agent_name: string | null; agent_type: string | null; total: number; counts: readonly number[]; other: number }[];
}

/** GET /stats/operators. */
export interface OperatorsJson {
  readonly operators: readonly {
    operator: string;
    crawled: number;
    referred: number;
    ratio: number | null;
    agents: readonly { agent_id: string; agent_name: string; count: number }[];
    referrals: readonly { referral: string; name: string; count: number }[];
  }[];
}

/** GET /stats. */
export interface StatsJson {
  readonly from: string;
  readonly to: string;
  readonly interval: string;
  readonly series: readonly { key: string | null; total: number; agent_name?: string | null; agent_type?: string | null }[];
  readonly buckets: readonly { start: string; counts: readonly number[]; other: number }[];
  readonly other: number;
  readonly total: number;
}

/** GET /stats/top-paths. */
export interface TopPathsJson {
  readonly paths: readonly { agent_id: string | null; agent_name: string | null; agent_type: string | null; path: string; count: number; last: string }[];
}

/** An agent named in saved robots rules: its catalog id, or a rule with its own paths. */
export type RobotsAgentEntryJson = string | { agent: string; disallow?: string[]; allow?: string[] };

/** Saved robots rules (GET /project-settings, GET /robots-violations). */
export interface RobotsRulesJson {
  agent_types: string[];
  disallow?: string[];
  allow?: string[];
  disallow_agents?: RobotsAgentEntryJson[];
  allow_agents?: RobotsAgentEntryJson[];
}

/** GET /robots-violations. */
export interface ViolationsJson {
  readonly robots: RobotsRulesJson | null;
  /** With `agent=`: the lines the rules give that agent and where they come from (null: none). */
  readonly agent_rule?: { source: 'agent_types' | 'disallow_agents' | 'allow_agents'; disallow: string[]; allow: string[] } | null;
  readonly violations: readonly { agent_id: string; agent_name: string; agent_type: string; path: string; count: number; last: string; rule: string }[];
}

/** GET/PUT /project-settings. */
export interface SettingsJson {
  readonly robots: RobotsRulesJson | null;
  /** Absent members mean the server's defaults. */
  readonly client_ip: { headers?: string[]; trusted_proxies?: number | string[] };
  /** The site's hosts for Web Bot Auth; empty: any host. */
  readonly site_hosts: string[];
}
