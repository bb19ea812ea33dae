/**
 * The time zone the dashboard shows times in: the browser's (local) or UTC, chosen in the
 * header and kept in this browser. Every time written (`format.ts`), every chart axis and
 * the analytics buckets (`tz` of the timeseries API) follow it, and name it. The app draws
 * its pages again when it changes (`onZoneChange`).
 */
export type ZoneChoice = 'local' | 'utc';

const KEY = 'ai-gateway.time-zone';
const listeners = new Set<() => void>();
/** The choice when the browser refuses storage. */
let fallback: ZoneChoice | null = null;

/** The browser's IANA zone (`America/Los_Angeles`); UTC when the browser does not say. */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function zoneChoice(): ZoneChoice {
  if (fallback) return fallback;
  try {
    return localStorage.getItem(KEY) === 'utc' ? 'utc' : 'local';
  } catch {
    return 'local';
  }
}

/** The IANA zone times are shown in. */
export function displayZone(): string {
  return zoneChoice() === 'utc' ? 'UTC' : browserZone();
}

export function setZoneChoice(choice: ZoneChoice): void {
  try {
    localStorage.setItem(KEY, choice);
  } catch {
    // Storage refused (private mode): the choice lasts until the page is left.
    fallback = choice;
  }
  listeners.forEach((listener) => listener());
}

/** Calls `listener` when the choice changes; returns the unsubscribe. */
export function onZoneChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** The zone's short name at a moment: "UTC", "PST", "GMT+5:30". */
export function zoneName(zone: string, at = new Date()): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'short' }).formatToParts(at).find((p) => p.type === 'timeZoneName');
  return part?.value ?? zone;
}

/** The wall-clock fields of a moment in a zone. */
function wallClock(date: Date, zone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const field = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: field('year'), month: field('month'), day: field('day'), hour: field('hour'), minute: field('minute'), second: field('second') };
}

/** How far the zone's wall clock is ahead of UTC at a moment, in ms. */
export function zoneOffsetMs(zone: string, date: Date): number {
  const wall = wallClock(date, zone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - Math.floor(date.getTime() / 1000) * 1000;
}

/** A moment as the value of an <input type="datetime-local"> on the zone's wall clock. */
export function toZoneInput(date: Date, zone: string): string {
  const local = new Date(date.getTime() + zoneOffsetMs(zone, date));
  return local.toISOString().slice(0, 16);
}

/** A datetime-local value read on the zone's wall clock, as a moment (daylight saving taken into account). */
export function fromZoneInput(value: string, zone: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute] = match.slice(1).map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  // The offset at the guess, then at the moment it gives (they differ only across a clock change).
  let moment = wall - zoneOffsetMs(zone, new Date(wall));
  moment = wall - zoneOffsetMs(zone, new Date(moment));
  return Number.isNaN(moment) ? null : new Date(moment);
}
