// The verifier contract: plain objects asked in order, each answering pass / fail / inconclusive
// with a reason from a closed set, so callers can switch on exactly what was found.
import type { Agent } from '../catalog/types.js';

/** What one verifier concluded. `inconclusive` is infrastructure trouble or no evidence, never spoofing. */
export type CheckOutcome = 'pass' | 'fail' | 'inconclusive';

/** Reason codes of the Web Bot Auth verifier (RFC 9421 + the web-bot-auth profile). */
export type WebBotAuthReason =
  | 'signature-valid'
  | 'signature-headers-missing'
  | 'signature-input-malformed'
  | 'signature-malformed'
  | 'signature-agent-malformed'
  | 'signature-agent-unsupported'
  | 'signature-agent-missing'
  | 'tag-missing'
  | 'created-missing'
  | 'expires-missing'
  | 'keyid-missing'
  | 'signature-expired'
  | 'signature-not-yet-valid'
  | 'window-too-long'
  | 'too-many-components'
  | 'authority-not-covered'
  | 'authority-not-ours'
  | 'signature-agent-not-covered'
  | 'signature-agent-mismatch'
  | 'authority-not-sent'
  | 'path-not-sent'
  | 'method-not-sent'
  | 'header-not-sent'
  | 'query-param-not-sent'
  | 'nonce-missing'
  | 'algorithm-unsupported'
  | 'key-unknown'
  | 'key-directory-unavailable'
  | 'key-directory-refused'
  | 'key-directory-invalid'
  | 'signature-invalid'
  | 'nonce-replayed';

/** Reason codes of the IP-range verifier. */
export type IpRangeReason = 'ip-in-range' | 'ip-not-in-range' | 'client-ip-missing' | 'client-ip-invalid' | 'client-ip-not-public' | 'client-ip-is-proxy';

/** Reason codes of the reverse-DNS verifier. */
export type ReverseDnsReason =
  | 'ptr-and-forward-match'
  | 'ptr-not-in-domain'
  | 'forward-mismatch'
  | 'too-many-ptrs'
  | 'no-ptr'
  | 'dns-error'
  | 'dns-timeout'
  | 'client-ip-missing'
  | 'client-ip-invalid'
  | 'client-ip-not-public'
  | 'client-ip-is-proxy';

/** Every reason a built-in verifier can give, plus `verifier-error` when a verifier throws. */
export type VerificationReason = WebBotAuthReason | IpRangeReason | ReverseDnsReason | 'verifier-error';

/** The names of the built-in verification methods; custom verifiers may use their own. */
export type VerificationMethod = 'web-bot-auth' | 'ip-ranges' | 'reverse-dns' | (string & {});

/** One verifier's answer. */
export interface VerificationCheck {
  readonly method: VerificationMethod;
  readonly outcome: CheckOutcome;
  readonly reason: VerificationReason | (string & {});
}

/** What a verifier sees of the request. Header names are lower-case; repeated values are joined with ", ". */
export interface VerificationRequest {
  readonly headers: ReadonlyMap<string, string>;
  /** The request method, when known (needed for `@method`). */
  readonly method?: string;
  /** The request path with its query string, when known (needed for `@path`, `@query`, `@target-uri`). */
  readonly path?: string;
  /** The client address chosen by the engine's client-IP rule, when one could be found. */
  readonly clientIp?: string;
  /**
   * When the request arrived (ms since the epoch), for a request judged after the fact (a stored
   * visit); signature validity is judged at this time. The context's `now()` when absent.
   */
  readonly receivedAt?: number;
  /**
   * The hosts the site answers on, for this request (a project's saved hosts), in place of the
   * Web Bot Auth verifier's `siteAuthorities`; empty or absent: the verifier's own.
   */
  readonly siteAuthorities?: readonly string[];
}

/** Platform capabilities shared by all verifiers of one engine. */
export interface VerificationContext {
  /** Milliseconds since the epoch; injected so expiry is testable. */
  now(): number;
}

/** A verification method for the verifier chain (DESIGN.md §4). */
export interface Verifier {
  readonly name: VerificationMethod;
  /** Whether this method can say anything about this agent for this request. */
  appliesTo(agent: Agent, request: VerificationRequest): boolean;
  verify(agent: Agent, request: VerificationRequest, context: VerificationContext): Promise<VerificationCheck> | VerificationCheck;
}
