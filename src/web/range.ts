// The date range and time zone of the analytics pages, kept in the URL (`range=7d`, or
// `range=custom&from=2026-11-01&to=2026-11-07`, and `tz=utc`), with a toolbar to change them and a
// live mode that redraws as visits arrive.
import { apiUrl, request } from './api.js';
import { field, h, type Child } from './dom.js';
import { dayOf, formatTime, isUtc, setUtc, shownTimeZone, startOfDay, viewerTimeZone } from './format.js';
import { currentParams, updateParams } from './route-state.js';

type Interval = 'minute' | 'hour' | 'day';

const RANGES: Record<string, { label: string; ms: number; interval: Interval }> = {
  '1h': { label: 'Last hour', ms: 3_600_000, interval: 'minute' },
  '24h': { label: 'Last 24 hours', ms: 86_400_000, interval: 'hour' },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, interval: 'hour' },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000, interval: 'day' },
  '90d': { label: 'Last 90 days', ms: 90 * 86_400_000, interval: 'day' },
};
const DEFAULT_RANGE = '24h';

/** A chosen range: ISO bounds for the API, the chart interval, and whether it ends now (live). */
export interface ChosenRange {
  readonly from: string;
  readonly to: string;
  readonly interval: Interval;
  /** A relative range ("last 24 hours") moves with the clock; custom dates do not. */
  readonly relative: boolean;
  readonly label: string;
}

/** The range the URL names (the last 24 hours when it names none or a bad one). */
export function chosenRange(params: URLSearchParams = currentParams(), now = Date.now()): ChosenRange {
  const key = params.get('range') ?? DEFAULT_RANGE;
  if (key === 'custom') {
    const from = startOfDay(params.get('from') ?? '');
    const lastDay = startOfDay(params.get('to') ?? '');
    if (from !== undefined && lastDay !== undefined && lastDay >= from) {
      // The last day is inclusive: up to the start of the day after it (in the shown zone).
      const to = startOfDay(dayOf(lastDay + 36 * 3_600_000))!;
      const days = (to - from) / 86_400_000;
      return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), interval: days <= 2 ? 'hour' : 'day', relative: false, label: `${params.get('from')} to ${params.get('to')}` };
    }
  }
  const chosen = RANGES[key] ?? RANGES[DEFAULT_RANGE]!;
  return { from: new Date(now - chosen.ms).toISOString(), to: new Date(now).toISOString(), interval: chosen.interval, relative: true, label: chosen.label.toLowerCase() };
}

/** The toolbar of a range page; `changed` runs after the URL holds the new choice. */
export interface RangeToolbar {
  readonly element: HTMLElement;
  /** The line naming the time zone, with the UTC switch (see `zoneLine`). */
  readonly zoneLine: HTMLElement;
  /** Shows when the page was last drawn (live mode). */
  updated(at: Date): void;
  /** Whether live mode is on (and the range is relative). */
  live(): boolean;
}

/**
 * Builds the toolbar: a range select (with custom dates), a UTC switch, a live switch and a
 * refresh button; every change is written to the URL first, then `changed` redraws.
 */
export function rangeToolbar(changed: () => void, extra: Child[] = []): RangeToolbar {
  const params = currentParams();
  const key = params.get('range') ?? DEFAULT_RANGE;
  const rangeSelect = h(
    'select',
    {},
    ...Object.entries(RANGES).map(([value, r]) => h('option', { value, selected: value === key }, r.label)),
    h('option', { value: 'custom', selected: key === 'custom' }, 'Custom dates'),
  );
  const fromInput = h('input', { type: 'date', value: params.get('from') ?? '' });
  const toInput = h('input', { type: 'date', value: params.get('to') ?? '' });
  // Dates that make no range (To before From, one left empty) are said to be so: the pages then
  // show the last 24 hours, which the dates do not say.
  const rangeProblem = h('p', { class: 'error', role: 'alert' });
  const checkDates = () => {
    const bad = rangeSelect.value === 'custom' && !(fromInput.value !== '' && toInput.value !== '' && toInput.value >= fromInput.value);
    rangeProblem.textContent = bad ? 'Choose a From date on or before the To date; the last 24 hours are shown until then.' : '';
    for (const input of [fromInput, toInput]) input.setAttribute('aria-invalid', String(bad));
  };
  const custom = h('div', { class: 'row custom-range' }, field('From', fromInput), field('To (inclusive)', toInput), rangeProblem);
  custom.hidden = key !== 'custom';
  checkDates();
  const liveBox = h('input', { type: 'checkbox', checked: params.get('live') !== 'off' });
  const liveLabel = h('label', { class: 'check switch' }, liveBox, ' Live');
  const refreshButton = h('button', { type: 'button' }, 'Refresh');
  const zone = zoneLine(changed);

  const write = () => {
    checkDates();
    const custom = rangeSelect.value === 'custom';
    updateParams({ range: rangeSelect.value === DEFAULT_RANGE ? undefined : rangeSelect.value, from: custom ? fromInput.value : undefined, to: custom ? toInput.value : undefined });
    changed();
  };
  rangeSelect.addEventListener('change', () => {
    const isCustom = rangeSelect.value === 'custom';
    custom.hidden = !isCustom;
    if (isCustom) {
      const now = Date.now();
      if (fromInput.value === '') fromInput.value = dayOf(now - 6 * 86_400_000);
      if (toInput.value === '') toInput.value = dayOf(now);
    }
    liveLabel.hidden = isCustom;
    write();
  });
  fromInput.addEventListener('change', write);
  toInput.addEventListener('change', write);
  refreshButton.addEventListener('click', changed);
  liveBox.addEventListener('change', () => {
    updateParams({ live: liveBox.checked ? undefined : 'off' });
    changed();
  });
  liveLabel.hidden = key === 'custom';
  return {
    element: h('div', { class: 'toolbar card' }, field('Date range', rangeSelect), custom, ...extra, h('div', { class: 'toolbar-end' }, liveLabel, refreshButton)),
    zoneLine: zone.element,
    updated: zone.updated,
    live: () => liveBox.checked && rangeSelect.value !== 'custom',
  };
}

/** The names a browser gives UTC as its own time zone. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/Universal', 'Etc/Zulu', 'Universal', 'Zulu']);

/**
 * The line naming the zone times are shown in, with a switch to UTC (kept in the URL as tz=utc);
 * `changed` redraws the page's times.
 */
export function zoneLine(changed: () => void): { element: HTMLElement; updated(at: Date): void } {
  const utcBox = h('input', { type: 'checkbox', checked: isUtc() });
  const zoneName = h('span', {}, shownTimeZone());
  const status = h('span', { class: 'updated' });
  utcBox.addEventListener('change', () => {
    setUtc(utcBox.checked);
    updateParams({ tz: utcBox.checked ? 'utc' : undefined });
    zoneName.textContent = shownTimeZone();
    changed();
  });
  // A viewer whose own zone is UTC has nothing to switch to.
  const switchToUtc = UTC_ZONES.has(viewerTimeZone()) ? null : h('label', { class: 'check inline' }, utcBox, ' Show UTC');
  return {
    element: h('p', { class: 'muted small zone-line' }, 'Times in ', zoneName, '.', switchToUtc === null ? null : ' ', switchToUtc, status),
    updated(at) {
      status.textContent = ` Updated ${formatTime(at.toISOString())}.`;
    },
  };
}

/**
 * Redraws a page while visits arrive: on each new visit of the project (at most every
 * `minMs`, default 5 s) and once a minute (relative ranges move with the clock). Returns the stop.
 */
export function liveRedraw(projectId: string, enabled: () => boolean, redraw: () => void, minMs = 5000): () => void {
  let stream: EventSource | undefined;
  let pending: ReturnType<typeof setTimeout> | undefined;
  let last = Date.now();
  let stopped = false;
  const schedule = () => {
    if (stopped || !enabled() || pending !== undefined) return;
    const wait = Math.max(0, last + minMs - Date.now());
    pending = setTimeout(() => {
      pending = undefined;
      if (stopped || !enabled()) return;
      last = Date.now();
      redraw();
    }, wait);
  };
  const open = () => {
    stream?.close();
    stream = new EventSource(apiUrl('/visits/stream', { project: projectId }), { withCredentials: true });
    stream.onmessage = schedule;
    stream.onerror = () => {
      // EventSource retries network errors itself; an error status closes it: check the session
      // (a 401 shows the login form), then try again later.
      if (!stopped && stream?.readyState === EventSource.CLOSED) {
        request('GET', '/admin/session').then(
          () => setTimeout(() => !stopped && open(), 5000),
          () => undefined,
        );
      }
    };
  };
  open();
  const minute = setInterval(schedule, 60_000);
  return () => {
    stopped = true;
    stream?.close();
    clearInterval(minute);
    if (pending !== undefined) clearTimeout(pending);
  };
}
