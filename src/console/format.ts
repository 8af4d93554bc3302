import { isoSeconds } from '../common/iso-seconds.js';

// How the console writes numbers, times, countries and languages for people (docs/console.md,
// "Words"). Pure functions of their input and the clock's `now`, so pages and tests agree.
// Intl's formatters are made once: constructing one costs far more than using it. Relative times
// and days are written here, in the words Intl's en-US gives (test/console/format.test.ts checks
// them against Intl): a page shows dozens, and Intl's format() cost 2–3 µs a call against well
// under one for joining words, which took a chart's 30 days from about 190 µs to a few.

const counts = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const regions = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const languages = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** A whole number with thousands separators: 1234567 → "1,234,567". */
export function count(n: number): string {
  if (!Number.isSafeInteger(n)) return counts.format(n);
  const digits = String(Math.abs(n));
  let grouped = '';
  for (let i = 0; i < digits.length; i++) grouped += (i > 0 && (digits.length - i) % 3 === 0 ? ',' : '') + digits[i];
  return n < 0 ? `-${grouped}` : grouped;
}

/** An instant as the console writes it exactly, to the minute: "2027-03-10 14:05 UTC". */
export function exactTime(at: Date | string): string {
  const d = typeof at === 'string' ? new Date(at) : at;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** exactTime, or nothing for an instant not reached (a request not decided). */
export const when = (at: Date | string | null | undefined): string => (at ? exactTime(at) : '');

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * How far `then` is from `now`, in the largest unit that reads naturally: "2 hours ago", "in 3
 * days". Under a minute is "just now" (past) or "in under a minute"; units switch where a rounded
 * figure would mislead (45 minutes is "1 hour", 22 hours "1 day"), as people round when they talk.
 */
export function relativeTime(then: number, now: number): string {
  const delta = then - now;
  const abs = Math.abs(delta);
  if (abs < MINUTE) return delta <= 0 ? 'just now' : 'in under a minute';
  const say = (n: number, unit: string) => {
    const whole = Math.max(1, Math.round(n));
    const words = `${count(whole)} ${unit}${whole === 1 ? '' : 's'}`;
    return delta < 0 ? `${words} ago` : `in ${words}`;
  };
  if (abs < 45 * MINUTE) return say(abs / MINUTE, 'minute');
  if (abs < 22 * HOUR) return say(abs / HOUR, 'hour');
  if (abs < 26 * DAY) return say(abs / DAY, 'day');
  if (abs < 320 * DAY) return say(abs / (30.44 * DAY), 'month');
  return say(abs / (365.25 * DAY), 'year');
}

/** A moment as a page shows it: relative text, and the exact time for the `<time>` element's title. */
export interface Moment {
  /** The machine-readable instant (`datetime`); empty when there is none. */
  iso: string;
  exact: string;
  text: string;
  /**
   * The element itself, `<time datetime="…" title="…">2 hours ago</time>`, or the text alone when
   * there is no instant; escaped here, so a template writes it raw (`<%~ m.html %>`). Made here
   * rather than by a partial: an Eta include cost about 9 µs, and a page shows up to 70 times.
   */
  html: string;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c]!);
const plain = (text: string): Moment => ({ iso: '', exact: '', text, html: escape(text) });

/** `at` as a Moment relative to `now`; no instant gives `none` as its text ("Never", or nothing). */
export function moment(at: Date | string | null | undefined, now: number, none = ''): Moment {
  if (at === null || at === undefined || at === '') return plain(none);
  const d = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(d.getTime())) return plain(String(at));
  const iso = isoSeconds(d);
  const exact = exactTime(d);
  const text = relativeTime(d.getTime(), now);
  // The three are digits, letters, spaces and "-:,": nothing to escape.
  return { iso, exact, text, html: `<time datetime="${iso}" title="${exact}">${text}</time>` };
}

/** A country by name from its ISO 3166-1 code ("DE" → "Germany"); a code Intl does not know stays as it is. */
export function countryName(code: string | null | undefined): string {
  if (!code) return '';
  try {
    return regions.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** A language by name from its ISO 639-1 code ("de" → "German"); a code Intl does not know stays as it is. */
export function languageName(code: string | null | undefined): string {
  if (!code) return '';
  try {
    return languages.of(code) ?? code;
  } catch {
    return code;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** A UTC day (YYYY-MM-DD) as a chart's axis writes it: "Mar 3". */
export const shortDay = (day: string) => `${MONTHS[Number(day.slice(5, 7)) - 1]} ${Number(day.slice(8, 10))}`;
/** A UTC day (YYYY-MM-DD) as a table writes it: "Wed, Mar 3, 2027". */
export const longDay = (day: string) => `${WEEKDAYS[new Date(`${day}T00:00:00Z`).getUTCDay()]}, ${shortDay(day)}, ${day.slice(0, 4)}`;

const compacts = new Map<string, Intl.NumberFormat>();

/** An amount rounded for a chart's axis, in the workspace currency: 150000 cents → "$1.5K". */
export function compactMoney(cents: number, currency: string, perUsd: number): string {
  let f = compacts.get(currency);
  if (!f) compacts.set(currency, (f = new Intl.NumberFormat('en-US', { style: 'currency', currency, notation: 'compact', minimumFractionDigits: 0, maximumFractionDigits: 1 })));
  return f.format((cents / 100) * perUsd);
}
