// What a route is: how it authenticates, whether it takes a JSON body, and the function that
// answers it. Route tables from several modules are merged into one router by the handler.
import type { Project } from './projects.js';
import type { ApiRequest, ApiResponse } from './types.js';

/**
 * Who may call a route: anyone; a project token (Known Agents style); a project token or an
 * admin session naming the project with `?project=ID`; or an admin session only.
 */
export type RouteAuth = 'none' | 'token' | 'token-or-admin' | 'admin';

/** What a route's function receives. */
export interface RouteContext {
  readonly request: ApiRequest;
  /** The path without base path and query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The project the request acts on: the token's, or the one an admin session named; undefined for 'none' and project-less admin routes. */
  readonly project: Project | undefined;
  /** The admin session, when the request was authenticated by one. */
  readonly admin: AdminSession | undefined;
  /** Values of the `{name}` segments of the route's path, percent-decoded (empty for exact paths). */
  readonly params: Readonly<Record<string, string>>;
  /** The token or admin session the request was authenticated by, to ask about again later (an event stream outlives its request). */
  readonly credential: CredentialCheck;
}

/** What asking again about a credential found: it still opens the project, it no longer does (logged out, revoked, rotated, project deleted), or the store could not say. */
export type CredentialStatus = 'valid' | 'revoked' | 'unknown';

/** A request's credential, asked about again by answers that outlive the request. */
export interface CredentialCheck {
  /**
   * A number that changes when a credential may have been revoked through this server (a token
   * issued or revoked, a project deleted, a logout, a new admin secret). Read from memory: cheap
   * enough to compare before every event.
   */
  changes(): number;
  /** Asks the token or session store again, never the token cache; resolves 'unknown' rather than rejecting. */
  check(): Promise<CredentialStatus>;
}

/** One route: a method on a path. */
export interface Route {
  readonly auth: RouteAuth;
  /** JSON body endpoints answer 415 to other media types and 413 past the body limit. */
  readonly json: boolean;
  /** A body limit below the API's, for a route that takes small bodies (answered 413 past it). */
  readonly maxBodyBytes?: number;
  readonly run: (context: RouteContext) => Promise<ApiResponse> | ApiResponse;
  /** Its OpenAPI 3.1 operation object, listed in GET /openapi.json; routes without one are not part of the API (static pages). */
  readonly openApi?: Readonly<Record<string, unknown>>;
}

/** Paths (relative to the base path) to methods to routes. */
export type RouteTable = Readonly<Record<string, Readonly<Record<string, Route>>>>;

/** A logged-in administrator. */
export interface AdminSession {
  readonly id: string;
  /** The CSRF token every state-changing admin request must echo in `x-csrf-token`. */
  readonly csrfToken: string;
}

/** Finds the admin session a request carries (a cookie, for the node adapter); undefined when none is valid. */
export interface AdminAuthenticator {
  authenticate(request: ApiRequest): Promise<AdminSession | undefined> | AdminSession | undefined;
  /** The project an admin acts on, by id; undefined when there is none. */
  findProject(projectId: string): Promise<Project | undefined> | Project | undefined;
  /**
   * A number that changes whenever a session ends through this authenticator (logout, a new
   * secret): an open event stream then asks about its session before its next event, rather than
   * once its usual interval has passed.
   */
  sessionsVersion?(): number;
}
