// Formatting for the dashboard: numbers in the viewer's locale, times in the viewer's time zone.

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dayOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** 12,345 in the viewer's locale. */
export function formatCount(n: number): string {
  return integer.format(n);
}

/** 12.5 % of a total (0 when the total is 0). */
export function formatShare(part: number, total: number): string {
  return percent.format(total === 0 ? 0 : part / total);
}

/** An ISO time in the viewer's zone: the time alone when it is today, else date and time. */
export function formatTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toDateString() === now.toDateString() ? timeOnly.format(date) : dateTime.format(date);
}

/** Full date and time in the viewer's zone, for tooltips. */
export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** A date in the viewer's zone. */
export function formatDay(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dayOnly.format(date);
}

/** The viewer's time zone name, shown so times are never ambiguous. */
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
