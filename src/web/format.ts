// Formatting for the dashboard: numbers in the viewer's locale, times in the viewer's time zone
// (or UTC when the page's `tz=utc` says so), plurals, and the names people use for things.
import { REFERRAL_PRODUCTS, type ReferralClass } from '../visits/referral.js';

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const plurals = new Intl.PluralRules('en');

let utc = false;
let dateTime: Intl.DateTimeFormat;
let timeOnly: Intl.DateTimeFormat;
let dayOnly: Intl.DateTimeFormat;
let dayKey: Intl.DateTimeFormat;
let minute: Intl.DateTimeFormat;

function makeFormats(): void {
  const timeZone = utc ? 'UTC' : undefined;
  dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium', timeZone });
  timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone });
  dayOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone });
  dayKey = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone });
  minute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone });
}
makeFormats();

/** Shows times in UTC (true) or in the viewer's own zone (false). */
export function setUtc(value: boolean): void {
  if (value === utc) return;
  utc = value;
  makeFormats();
}

/** Whether times are shown in UTC. */
export function isUtc(): boolean {
  return utc;
}

/** The zone times are shown in, named so they are never ambiguous. */
export function shownTimeZone(): string {
  return utc ? 'UTC' : viewerTimeZone();
}

/** 12,345 in the viewer's locale. */
export function formatCount(n: number): string {
  return integer.format(n);
}

/** 12.5 in the viewer's locale (one decimal at most). */
export function formatDecimal(n: number): string {
  return decimal.format(n);
}

/** "1 visit", "2 visits", "1,024 visits": the count with the word in the right number. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${plurals.select(n) === 'one' ? one : many}`;
}

/** 12.5 % of a total (0 when the total is 0). */
export function formatShare(part: number, total: number): string {
  return percent.format(total === 0 ? 0 : part / total);
}

/** An ISO time in the shown zone: the time alone when it is today, else date and time. */
export function formatTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return dayKey.format(date) === dayKey.format(now) ? timeOnly.format(date) : dateTime.format(date);
}

/** Full date and time in the shown zone, for tooltips. */
export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** A date and time to the minute in the shown zone (times known only to the minute). */
export function formatMinute(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : minute.format(date);
}

/** A date in the shown zone. */
export function formatDay(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dayOnly.format(date);
}

/** YYYY-MM-DD of a time in the shown zone (the value of a date input). */
export function dayOf(time: number): string {
  return dayKey.format(new Date(time));
}

/**
 * The instant a shown-zone day starts (YYYY-MM-DD): local midnight, or midnight UTC. Undefined
 * for a malformed day.
 */
export function startOfDay(day: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const time = utc ? Date.parse(`${day}T00:00:00Z`) : new Date(`${day}T00:00`).getTime();
  return Number.isNaN(time) ? undefined : time;
}

/** A duration in milliseconds as people read it: "85 ms", "1.2 s". */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${decimal.format(ms)} ms` : `${decimal.format(ms / 1000)} s`;
}

/** The viewer's time zone name. */
export function viewerTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Verification results as people read them. */
export const RESULT_LABELS: Record<string, string> = {
  verified: 'Verified',
  verification_failed: 'Spoofed',
  not_verifiable: 'Not verifiable',
  unknown_agent: 'Not an agent',
};

/** The AI product a referral class stands for, as people write it ("ChatGPT", not "chatgpt"). */
export function referralName(referral: string): string {
  return REFERRAL_PRODUCTS[referral as ReferralClass]?.name ?? referral;
}

/** Verification methods as people read them. */
export const METHOD_LABELS: Record<string, string> = {
  'web-bot-auth': 'Web Bot Auth signature',
  'ip-ranges': 'Published IP ranges',
  'reverse-dns': 'Reverse DNS',
};

/** What a check's outcome means for the visit. */
export const OUTCOME_LABELS: Record<string, string> = { pass: 'Passed', fail: 'Failed', inconclusive: 'Inconclusive' };

// What each reason code found, in words (src/verify/types.ts lists the codes).
const REASONS: Record<string, string> = {
  'signature-valid': 'The request carried a valid signature from a key the agent publishes.',
  'signature-headers-missing': 'The request carried no Signature and Signature-Input headers.',
  'signature-input-malformed': 'The Signature-Input header could not be parsed.',
  'signature-malformed': 'The Signature header could not be parsed.',
  'signature-agent-malformed': 'The Signature-Agent header could not be parsed.',
  'signature-agent-unsupported': 'The Signature-Agent names an origin this agent does not sign from.',
  'signature-agent-missing': 'The signature names a Signature-Agent the request does not carry.',
  'tag-missing': 'The signature is not tagged "web-bot-auth".',
  'created-missing': 'The signature has no creation time.',
  'expires-missing': 'The signature has no expiry time.',
  'keyid-missing': 'The signature names no key.',
  'signature-expired': 'The signature had expired.',
  'signature-not-yet-valid': 'The signature was created in the future.',
  'window-too-long': 'The signature claims to be valid for longer than allowed.',
  'authority-not-ours': "The request names a host this site does not answer on: a signature made for another site, replayed here.",
  'too-many-components': 'The signature covers more parts of the request than any crawler signs (over 32), so it was not checked.',
  'authority-not-covered': 'The signature does not cover the host it was sent to.',
  'signature-agent-not-covered': 'The signature does not cover the Signature-Agent header.',
  'signature-agent-mismatch': 'The Signature-Agent header differs from the one signed.',
  'authority-not-sent': 'The signature covers the host, but no Host header was sent: it could not be checked.',
  'path-not-sent': 'The signature covers the request path, but none was sent: it could not be checked.',
  'method-not-sent': 'The signature covers the request method, but none was sent: it could not be checked.',
  'header-not-sent': 'The signature covers a header that was not sent: it could not be checked.',
  'query-param-not-sent': 'The signature covers a query parameter that was not sent: it could not be checked.',
  'nonce-missing': 'The signature carries no nonce, and this server requires one to refuse replays.',
  'algorithm-unsupported': 'The signature uses an algorithm other than Ed25519.',
  'key-unknown': "The signing key is not in the agent's key directory.",
  'key-directory-unavailable': "The agent's key directory could not be fetched.",
  'key-directory-refused': "The agent's key directory address was refused (not a public https URL).",
  'key-directory-invalid': "The agent's key directory is not a valid key set.",
  'signature-invalid': 'The signature does not match the request: forged or altered.',
  'nonce-replayed': 'The signature was used before (a replay).',
  'ip-in-range': 'The address is inside the ranges the operator publishes for this agent.',
  'ip-not-in-range': 'The address is outside every range the operator publishes for this agent.',
  'client-ip-missing': 'No client address was found in the request headers.',
  'client-ip-invalid': 'The client address could not be read.',
  'client-ip-not-public': "The only client address known is a private or loopback one (the site's own network): no evidence either way.",
  'client-ip-is-proxy': "The only client address known is a CDN's edge (Cloudflare's, not among the project's trusted proxies): no evidence either way.",
  'ptr-and-forward-match': "The address's reverse DNS name is in the operator's domain and resolves back to it.",
  'ptr-not-in-domain': "The address's reverse DNS name is outside the operator's domains.",
  'forward-mismatch': "The reverse DNS name does not resolve back to the address.",
  'too-many-ptrs': 'More than eight reverse DNS names are in the operator\'s domain and the eight looked up do not resolve back to the address: no evidence either way.',
  'no-ptr': 'The address has no reverse DNS name.',
  'dns-error': 'DNS could not be asked (an error): no evidence either way.',
  'dns-timeout': 'DNS did not answer in time: no evidence either way.',
  'verifier-error': 'The verifier failed unexpectedly: no evidence either way.',
};

/** What a verification reason code found, in words; the code itself when it is not a built-in one. */
export function reasonText(reason: string): string {
  return REASONS[reason] ?? reason;
}
