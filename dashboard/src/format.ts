/** How numbers, times and costs are written on every page. */
import { displayZone, fromZoneInput, toZoneInput } from './time-zone';

const integer = new Intl.NumberFormat('en-US');

export const formatInt = (n: number | null | undefined) => (n === null || n === undefined ? '—' : integer.format(n));

const smallCost = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });
const cost = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });

/**
 * A cost in USD: small ones with two significant digits written out ($0.00000016, never
 * $1.6e-7); null is "no price known", never $0.
 */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return 'no price';
  if (usd === 0) return '$0.00';
  const sign = usd < 0 ? '-' : '';
  const size = Math.abs(usd);
  return `${sign}$${size < 0.01 ? smallCost.format(size) : cost.format(size)}`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${integer.format(Math.round(ms))} ms`;
}

/** Formatters by zone and style: times are written in the zone chosen (time-zone.ts). */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(style: 'short' | 'full', zone: string): Intl.DateTimeFormat {
  const key = `${style} ${zone}`;
  let format = formatters.get(key);
  if (!format) {
    format =
      style === 'short'
        ? new Intl.DateTimeFormat(undefined, { timeZone: zone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' })
        : new Intl.DateTimeFormat(undefined, { timeZone: zone, dateStyle: 'medium', timeStyle: 'long' });
    formatters.set(key, format);
  }
  return format;
}

/** A time in a list (the column names the zone). */
export const formatTime = (iso: string) => formatter('short', displayZone()).format(new Date(iso));

/** A full time, with its zone's name ("Nov 28, 2026, 1:02:03 PM PST"). */
export const formatDateTime = (iso: string | null | undefined) => (iso ? formatter('full', displayZone()).format(new Date(iso)) : '—');

/** ISO (UTC) to the value of an <input type="datetime-local"> in the zone times are shown in, and back. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return toZoneInput(date, displayZone());
}

export function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  return fromZoneInput(value, displayZone())?.toISOString();
}

export const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function statusClass(status: number): string {
  if (status >= 500) return 'status status-5xx';
  if (status >= 400) return 'status status-4xx';
  return 'status status-2xx';
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "5 minutes ago", "yesterday", "just now": the largest whole unit (times in the future read "just now" too). */
export function formatRelative(iso: string, now = Date.now()): string {
  const ago = now - new Date(iso).getTime();
  for (const [unit, ms] of UNITS) if (ago >= ms) return relative.format(-Math.floor(ago / ms), unit);
  return 'just now';
}
