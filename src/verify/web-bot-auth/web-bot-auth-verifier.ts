// The Web Bot Auth verifier: RFC 9421 signatures under the web-bot-auth profile, keys looked up
// by (directory URL, keyid) in pinned keys or fetched key directories, Ed25519 injected.
import type { Agent } from '../../catalog/types.js';
import type { CheckOutcome, VerificationCheck, VerificationRequest, Verifier, WebBotAuthReason } from '../types.js';
import { siteAuthority, type HttpMessage } from './components.js';
import type { DirectoryFetcher } from './directory-fetcher.js';
import { defaultEd25519, type Ed25519Verify } from './ed25519.js';
import { ed25519KeyFromJwk, ed25519RawKey, isPublishedTestKey, keyUsableAt, type Ed25519PublicKey } from './jwk.js';
import { createKeyDirectoryCache, type KeyDirectoryCache, type KeyDirectoryCacheOptions, type KeyLookup } from './key-directory.js';
import { checkProfile, WEB_BOT_AUTH_TAG } from './profile.js';
import type { NonceStore } from './replay-guard.js';
import { createSignatureBase } from './signature-base.js';
import { coveredSignatureAgent, directoryLocation, KEY_DIRECTORY_PATH, parseSignatureAgent, type SignatureAgentHeader } from './signature-agent.js';
import { isWellFormed, parseSignatureField, parseSignatureInput, type MalformedSignatureInput, type SignatureInput } from './signature-input.js';

/** A pinned public key: trusted without fetching. */
export interface PinnedKey {
  /** The JWK (`kty: "OKP"`, `crv: "Ed25519"`, `x`); private members are ignored. */
  readonly jwk: unknown;
  /**
   * The directory the key belongs to (an origin or the full directory URL). Signatures whose
   * Signature-Agent names this directory use the pinned keys instead of fetching. Without it,
   * the key serves signatures that carry no Signature-Agent.
   */
  readonly directory?: string;
  /** The catalog agent id the key proves. Without it, the key proves an agent whose `signature_agents` lists the directory's origin (or, for a key with no directory, any candidate agent). */
  readonly agent?: string;
}

/** Options of `webBotAuthVerifier`. */
export interface WebBotAuthVerifierOptions {
  /** Fetches key directories (e.g. the node adapter's SSRF-safe fetcher). Without it only pinned keys are used. */
  readonly fetchDirectory?: DirectoryFetcher;
  /** Pinned keys, used with no fetching. */
  readonly keys?: readonly PinnedKey[];
  /** Ed25519 verification; default: WebCrypto when it supports Ed25519, else @noble/ed25519. */
  readonly verifyEd25519?: Ed25519Verify;
  /** Scheme of the target URI for `@scheme` / `@target-uri` and the default port of `@authority`. Default `https`. */
  readonly scheme?: 'https' | 'http';
  /** Clock leeway in seconds for `created` / `expires`. Default 60. */
  readonly clockSkewSeconds?: number;
  /** Longest accepted `expires - created` in seconds. Default 86,400 (24 h, the drafts' recommendation). */
  readonly maxWindowSeconds?: number;
  /** Web Bot Auth signatures checked per request, at most (bounds CPU per request). Default 4. */
  readonly maxSignatures?: number;
  /**
   * Optional replay guard: a verified signature whose nonce was seen before within its validity
   * fails `nonce-replayed`. It covers signatures that carry a nonce; see `requireNonce`.
   */
  readonly nonceStore?: NonceStore;
  /**
   * Only signatures with a nonce can verify (needs `nonceStore`): a valid signature without one
   * is `inconclusive` `nonce-missing`, since nothing stops it being replayed within its window.
   * Default false: a nonce-less signature verifies as often as it is sent until it expires.
   */
  readonly requireNonce?: boolean;
  /** Key directory cache limits and lifetimes. */
  readonly directoryCache?: KeyDirectoryCacheOptions;
  /**
   * Accept a published example key (RFC 9421 B.1.4's `test-key-ed25519`, whose private key is in
   * the RFC) pinned or listed in a directory. Default false: anyone could sign as an agent whose
   * directory lists it by mistake. For test suites that check the RFC's and the draft's vectors.
   */
  readonly allowTestKeys?: boolean;
  /**
   * The site's own hosts (`example.com`, `www.example.com`, `example.com:8443`). Given, a request
   * whose authority (`Host`) is none of them fails `authority-not-ours`: a crawler's signature made
   * for another site, sent here with that site's Host, is a replay (a nonce store cannot tell, never
   * having seen it). List every host the site answers on. Default: any host. A request's own
   * `siteAuthorities` (a project's saved hosts on the reference server) replace these.
   */
  readonly siteAuthorities?: readonly string[];
}

interface PinnedEntry {
  readonly key: Ed25519PublicKey;
  readonly agent: string | undefined;
}

type Outcome = { readonly outcome: CheckOutcome; readonly reason: WebBotAuthReason };
type KeyResolution = { readonly ok: true; readonly key: Ed25519PublicKey; readonly scope: string } | { readonly ok: false; readonly result: Outcome };

const METHOD = 'web-bot-auth';
const fail = (reason: WebBotAuthReason): Outcome => ({ outcome: 'fail', reason });
const inconclusive = (reason: WebBotAuthReason): Outcome => ({ outcome: 'inconclusive', reason });
const PASS: Outcome = { outcome: 'pass', reason: 'signature-valid' };
const FAILURE_REASON = { refused: 'key-directory-refused', unavailable: 'key-directory-unavailable', invalid: 'key-directory-invalid' } as const;

function integerOption(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}, got ${String(value)}`);
  return value;
}

function compilePinned(keys: readonly PinnedKey[] | undefined, allowTestKeys: boolean): Array<PinnedKey & { readonly scope: string }> {
  const out: Array<PinnedKey & { readonly scope: string }> = [];
  if (keys === undefined) return out;
  if (!Array.isArray(keys)) throw new TypeError('keys must be an array of { jwk, directory?, agent? }');
  keys.forEach((pinned, i) => {
    if (typeof pinned !== 'object' || pinned === null) throw new TypeError(`keys[${i}] must be an object, got ${String(pinned)}`);
    if (ed25519RawKey(pinned.jwk) === undefined) throw new TypeError(`keys[${i}].jwk must be an Ed25519 public JWK (kty "OKP", crv "Ed25519", 32-byte x)`);
    if (!allowTestKeys && isPublishedTestKey(pinned.jwk)) throw new RangeError(`keys[${i}].jwk is RFC 9421's example key (test-key-ed25519), whose private key is published: anyone can sign with it (allowTestKeys: true is for test suites)`);
    if (pinned.agent !== undefined && typeof pinned.agent !== 'string') throw new TypeError(`keys[${i}].agent must be a string, got ${typeof pinned.agent}`);
    let scope = '';
    if (pinned.directory !== undefined) {
      const location = typeof pinned.directory === 'string' ? directoryLocation({ uri: pinned.directory, type: 'directory' }) : undefined;
      if (location === undefined || !location.ok) throw new RangeError(`keys[${i}].directory must be an origin or key directory URL, got ${String(pinned.directory)}`);
      scope = location.url;
    }
    out.push({ ...pinned, scope });
  });
  return out;
}

/**
 * Creates the Web Bot Auth verifier. It applies to a request that has both `Signature-Input`
 * and `Signature` headers; it judges only signatures tagged `web-bot-auth`.
 *
 * Outcomes: `pass` when any tagged signature verifies; `fail` on evidence against the claim
 * (a signature checked against the agent's key that does not hold, expired, a replayed nonce,
 * uncovered authority or Signature-Agent, malformed fields, keyid absent from the agent's freshly
 * fetched directory); `inconclusive` when no signature is tagged, a covered input was not sent
 * (`authority-not-sent`, `path-not-sent`, ...: the signature cannot be checked), the window is
 * longer than allowed, the directory cannot be fetched or used, the signer is not the candidate
 * agent, or a nonce is required and absent.
 * @throws {TypeError | RangeError} for an invalid option (the message names it).
 * @example
 * // fetchDirectory: createSafeDirectoryFetcher() from 'agentwarden/node', or any DirectoryFetcher.
 * const engine = createEngine({ verifiers: [webBotAuthVerifier({ fetchDirectory: createSafeDirectoryFetcher() })] });
 * await engine.verify({ request_headers: headers, request_method: 'GET', request_path: '/' });
 */
export function webBotAuthVerifier(options: WebBotAuthVerifierOptions = {}): Verifier {
  if (typeof options !== 'object' || options === null) throw new TypeError(`options must be an object, got ${String(options)}`);
  const { fetchDirectory, nonceStore } = options;
  if (fetchDirectory !== undefined && typeof fetchDirectory !== 'function') throw new TypeError(`fetchDirectory must be a function, got ${typeof fetchDirectory}`);
  if (options.verifyEd25519 !== undefined && typeof options.verifyEd25519 !== 'function') throw new TypeError(`verifyEd25519 must be a function, got ${typeof options.verifyEd25519}`);
  if (nonceStore !== undefined && typeof nonceStore?.claim !== 'function') throw new TypeError('nonceStore must have a claim function (see createNonceStore)');
  const requireNonce = options.requireNonce ?? false;
  if (typeof requireNonce !== 'boolean') throw new TypeError(`requireNonce must be a boolean, got ${typeof requireNonce}`);
  // Without a store a required nonce would be checked for presence only, which refuses no replay.
  if (requireNonce && nonceStore === undefined) throw new RangeError('requireNonce needs a nonceStore (createNonceStore()) to remember nonces in');
  const scheme = options.scheme ?? 'https';
  if (scheme !== 'https' && scheme !== 'http') throw new RangeError(`scheme must be "https" or "http", got ${String(scheme)}`);
  const limits = {
    clockSkewSeconds: integerOption(options.clockSkewSeconds, 60, 'clockSkewSeconds', 0),
    maxWindowSeconds: integerOption(options.maxWindowSeconds, 86_400, 'maxWindowSeconds', 1),
  };
  const maxSignatures = integerOption(options.maxSignatures, 4, 'maxSignatures', 1);
  let siteAuthorities: ReadonlySet<string> | undefined;
  if (options.siteAuthorities !== undefined) {
    if (!Array.isArray(options.siteAuthorities) || options.siteAuthorities.length === 0) throw new TypeError('siteAuthorities must be a non-empty array of host names');
    siteAuthorities = new Set(
      options.siteAuthorities.map((host: unknown, i) => {
        const normalized = typeof host === 'string' ? siteAuthority(host, scheme) : undefined;
        if (normalized === undefined) throw new RangeError(`siteAuthorities[${i}] must be a host or host:port, got ${JSON.stringify(host)}`);
        return normalized;
      }),
    );
  }
  // A request's own list (a project's saved hosts, validated when saved) is compiled once per list.
  const requestAuthorities = new WeakMap<readonly string[], ReadonlySet<string>>();
  const authoritiesOf = (request: VerificationRequest): ReadonlySet<string> | undefined => {
    const listed = request.siteAuthorities;
    if (listed === undefined || listed.length === 0) return siteAuthorities;
    let compiled = requestAuthorities.get(listed);
    if (compiled === undefined) {
      compiled = new Set(listed.map((host) => siteAuthority(host, scheme)).filter((host) => host !== undefined));
      requestAuthorities.set(listed, compiled);
    }
    return compiled;
  };
  const verifyEd25519 = options.verifyEd25519 ?? defaultEd25519();
  const allowTestKeys = options.allowTestKeys === true;
  const pinnedInput = compilePinned(options.keys, allowTestKeys);
  const cache: KeyDirectoryCache | undefined =
    fetchDirectory === undefined ? undefined : createKeyDirectoryCache(fetchDirectory, verifyEd25519, { ...options.directoryCache, allowTestKeys }, limits.clockSkewSeconds);

  // Thumbprints need async SHA-256: pinned keys are read once, on first use.
  let pinned: Promise<Map<string, Map<string, PinnedEntry>>> | undefined;
  const pinnedKeys = (): Promise<Map<string, Map<string, PinnedEntry>>> =>
    (pinned ??= (async () => {
      const byScope = new Map<string, Map<string, PinnedEntry>>();
      for (const entry of pinnedInput) {
        const key = (await ed25519KeyFromJwk(entry.jwk))!;
        let scope = byScope.get(entry.scope);
        if (scope === undefined) byScope.set(entry.scope, (scope = new Map()));
        scope.set(key.thumbprint, { key, agent: entry.agent });
      }
      return byScope;
    })());

  // The origins an agent's signatures may come from, canonicalised once per agent.
  const originsOf = new WeakMap<Agent, ReadonlySet<string>>();
  const agentOrigins = (agent: Agent): ReadonlySet<string> => {
    let origins = originsOf.get(agent);
    if (origins === undefined) {
      origins = new Set(
        (agent.signature_agents ?? []).flatMap((origin) => {
          try {
            return [new URL(origin).origin];
          } catch {
            return [];
          }
        }),
      );
      originsOf.set(agent, origins);
    }
    return origins;
  };

  const fromCache = async (url: string, keyid: string, nowMs: number): Promise<KeyLookup> =>
    cache === undefined ? { status: 'unavailable' } : cache.lookup(url, keyid, nowMs);

  const lookupResult = (lookup: KeyLookup, scope: string): KeyResolution =>
    lookup.status === 'found'
      ? { ok: true, key: lookup.key, scope }
      : { ok: false, result: lookup.status === 'unknown' ? fail('key-unknown') : inconclusive(FAILURE_REASON[lookup.status]) };

  const resolveKey = async (agent: Agent, keyid: string, directory: { url: string; origin: string } | undefined, nowMs: number): Promise<KeyResolution> => {
    const nowSeconds = Math.floor(nowMs / 1000);
    const pins = await pinnedKeys();
    if (directory !== undefined) {
      const bound = agentOrigins(agent).has(directory.origin);
      const scope = pins.get(directory.url);
      // Pinned keys of this directory are authoritative for it: no fetching.
      const usable = scope === undefined ? [] : [...scope.values()].filter((entry) => (entry.agent === undefined ? bound : entry.agent === agent.id));
      if (usable.length > 0) {
        const entry = scope!.get(keyid);
        return entry !== undefined && usable.includes(entry) && keyUsableAt(entry.key, nowSeconds) ? { ok: true, key: entry.key, scope: directory.url } : { ok: false, result: fail('key-unknown') };
      }
      // Never fetch a directory the candidate agent does not name: the signer is someone else.
      if (!bound) return { ok: false, result: inconclusive('signature-agent-mismatch') };
      if (cache === undefined) return { ok: false, result: inconclusive('key-directory-unavailable') };
      // A `jwks_uri` Signature-Agent may name any path of the origin, and each request a new one: a
      // fetch each, the cache flooded past the real directory, or (with a bound on paths) squatted
      // by junk ones. Only the origin's well-known directory is fetched; any other is refused unfetched.
      if (directory.url !== `${directory.origin}${KEY_DIRECTORY_PATH}`) return { ok: false, result: inconclusive('key-directory-refused') };
      return lookupResult(await fromCache(directory.url, keyid, nowMs), directory.url);
    }
    // No Signature-Agent: pinned keys without a directory, then the agent's own directories.
    let sources = 0;
    let trouble: Outcome | undefined;
    const loose = pins.get('');
    if (loose !== undefined) {
      const entry = loose.get(keyid);
      if (entry !== undefined && (entry.agent === undefined || entry.agent === agent.id) && keyUsableAt(entry.key, nowSeconds)) return { ok: true, key: entry.key, scope: '' };
      if ([...loose.values()].some((e) => e.agent === undefined || e.agent === agent.id)) sources++;
    }
    if (cache !== undefined) {
      for (const origin of agentOrigins(agent)) {
        const url = `${origin}${KEY_DIRECTORY_PATH}`;
        const resolution = lookupResult(await fromCache(url, keyid, nowMs), url);
        if (resolution.ok) return resolution;
        sources++;
        if (resolution.result.outcome === 'inconclusive') trouble ??= resolution.result;
      }
    }
    if (trouble !== undefined) return { ok: false, result: trouble };
    return { ok: false, result: sources > 0 ? fail('key-unknown') : inconclusive('signature-agent-missing') };
  };

  /** Whether every member of a Signature-Agent names a directory the agent neither lists nor has keys pinned for. */
  const signedBySomeoneElse = async (agent: Agent, header: SignatureAgentHeader): Promise<boolean> => {
    const members = header.form === 'string' ? [header.member] : [...header.members.values()];
    const pins = await pinnedKeys();
    return members.every((member) => {
      const location = directoryLocation(member);
      return location.ok && !agentOrigins(agent).has(location.origin) && !pins.has(location.url);
    });
  };

  const verifyOne = async (
    agent: Agent,
    input: SignatureInput | MalformedSignatureInput,
    signatures: ReadonlyMap<string, Uint8Array>,
    signatureAgent: SignatureAgentHeader | undefined | null,
    message: HttpMessage,
    nowMs: number,
    receivedMs: number,
    foreignHost: boolean,
  ): Promise<Outcome> => {
    if (!isWellFormed(input)) return fail('signature-input-malformed');
    // RFC 9421 §3.2 step 1: the label must be in both fields.
    const signature = signatures.get(input.label);
    // RFC 8032 §5.1.6: an Ed25519 signature is 64 bytes.
    if (signature === undefined || signature.length !== 64) return fail('signature-malformed');
    // Someone else's signature (a signer the claimed agent does not sign as) says nothing about
    // this agent, whatever its times or coverage: no evidence, and the next verifier decides.
    if (signatureAgent !== undefined && signatureAgent !== null && (await signedBySomeoneElse(agent, signatureAgent))) return inconclusive('signature-agent-mismatch');
    // The agent's own signature, for a host that is not this site's: a replay.
    if (foreignHost) return fail('authority-not-ours');
    // Validity is judged at the time the request arrived: a visit reported minutes later (batched,
    // retried) carries a signature that was valid when it was sent.
    const violation = checkProfile(input, Math.floor(receivedMs / 1000), limits);
    if (violation !== undefined) return violation;
    let directory: { url: string; origin: string } | undefined;
    if (signatureAgent === null) return fail('signature-agent-malformed');
    if (signatureAgent !== undefined) {
      // architecture-05 / GHSA-x9cc-346q-g27m: a present Signature-Agent must be covered.
      const covered = coveredSignatureAgent(signatureAgent, input.components, input.label);
      if (!covered.ok) return covered.reason === 'header-not-sent' ? inconclusive(covered.reason) : fail(covered.reason);
      const location = directoryLocation(covered.member);
      if (!location.ok) return location.reason === 'signature-agent-unsupported' ? inconclusive(location.reason) : fail(location.reason);
      directory = location;
    }
    const base = createSignatureBase(message, input);
    // A covered input the caller did not send (no Host, no path) leaves the signature unchecked:
    // no evidence either way. An identifier no message can have is a malformed signature.
    if (!base.ok) return base.reason === 'component-invalid' ? fail('signature-input-malformed') : inconclusive(base.reason);
    const resolution = await resolveKey(agent, input.params.keyid!, directory, nowMs);
    if (!resolution.ok) return resolution.result;
    if (!(await verifyEd25519(resolution.key.raw, base.base, signature))) return fail('signature-invalid');
    const nonce = input.params.nonce;
    if (nonce === undefined && requireNonce) return inconclusive('nonce-missing');
    // Recorded only once the signature verified: nobody can burn someone else's nonce.
    if (nonceStore !== undefined && nonce !== undefined) {
      if (!nonceStore.claim(`${resolution.scope} ${input.params.keyid} ${nonce}`, (input.params.expires! + limits.clockSkewSeconds) * 1000, nowMs)) return fail('nonce-replayed');
    }
    return PASS;
  };

  return {
    name: METHOD,
    // Applies when both signature fields are present; which signatures count is decided in verify.
    appliesTo: (_agent, request) => request.headers.has('signature-input') && request.headers.has('signature'),
    async verify(agent, request: VerificationRequest, context): Promise<VerificationCheck> {
      const check = (outcome: Outcome): VerificationCheck => ({ method: METHOD, outcome: outcome.outcome, reason: outcome.reason });
      const inputField = request.headers.get('signature-input');
      const signatureField = request.headers.get('signature');
      if (inputField === undefined || signatureField === undefined) return check(inconclusive('signature-headers-missing'));
      const inputs = parseSignatureInput(inputField);
      if (inputs === undefined) return check(fail('signature-input-malformed'));
      // RFC 9421 §7.2.5: labels carry no meaning; `tag` selects the signatures to judge.
      const tagged = inputs.filter((input) => (isWellFormed(input) ? input.params.tag : input.tag) === WEB_BOT_AUTH_TAG);
      if (tagged.length === 0) return check(inconclusive('tag-missing'));
      const signatures = parseSignatureField(signatureField);
      if (signatures === undefined) return check(fail('signature-malformed'));
      const agentField = request.headers.get('signature-agent');
      const signatureAgent = agentField === undefined ? undefined : (parseSignatureAgent(agentField) ?? null);
      const message: HttpMessage = {
        headers: request.headers,
        method: request.method,
        scheme,
        authority: request.headers.get(':authority') ?? request.headers.get('host'),
        target: request.path,
      };
      const nowMs = context.now();
      const receivedMs = request.receivedAt ?? nowMs;
      // A host that is none of the site's (`site.example.` is `site.example`); no Host at all is
      // left to the signature check: authority-not-sent.
      const ours = authoritiesOf(request);
      const foreignHost = ours !== undefined && message.authority !== undefined && !ours.has(siteAuthority(message.authority, scheme) ?? '');
      // Any valid signature passes; otherwise the first failure, else the first inconclusive answer.
      let firstFail: Outcome | undefined;
      let firstInconclusive: Outcome | undefined;
      for (const input of tagged.slice(0, maxSignatures)) {
        const outcome = await verifyOne(agent, input, signatures, signatureAgent, message, nowMs, receivedMs, foreignHost);
        if (outcome.outcome === 'pass') return check(outcome);
        if (outcome.outcome === 'fail') firstFail ??= outcome;
        else firstInconclusive ??= outcome;
      }
      return check(firstFail ?? firstInconclusive!);
    },
  };
}
