import { describe, expect, it } from 'vitest';
import { barChart, niceCeiling, timelineChart } from '../../src/console/charts.js';
import { compactMoney, count, countryName, exactTime, languageName, longDay, moment, relativeTime, shortDay } from '../../src/console/format.js';
import { actionWords, EVENT_WORDS, eventWords, STATUS_WORDS, statusWords } from '../../src/console/words.js';
import { eventTypes } from '../../src/domain/events/event-types.js';
import { orderStatuses, turnOf } from '../../src/domain/orders/states.js';

// The console's words and formats (src/console/format.ts, words.ts) and its charts' geometry
// (charts.ts), as pure functions of their input and the clock's now.

const NOW = Date.parse('2027-03-10T12:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('relative times — happy', () => {
  it('says the past and the future in the unit people would', () => {
    expect(relativeTime(NOW, NOW)).toBe('just now');
    expect(relativeTime(NOW - 59_000, NOW)).toBe('just now');
    expect(relativeTime(NOW + 30_000, NOW)).toBe('in under a minute');
    expect(relativeTime(NOW - MIN, NOW)).toBe('1 minute ago');
    expect(relativeTime(NOW - 5 * MIN - 20_000, NOW)).toBe('5 minutes ago');
    expect(relativeTime(NOW - 2 * HOUR, NOW)).toBe('2 hours ago');
    expect(relativeTime(NOW + 12 * HOUR, NOW)).toBe('in 12 hours');
    expect(relativeTime(NOW - 3 * DAY, NOW)).toBe('3 days ago');
    expect(relativeTime(NOW + 21.5 * DAY, NOW)).toBe('in 22 days');
    expect(relativeTime(NOW - 90 * DAY, NOW)).toBe('3 months ago');
    expect(relativeTime(NOW + 2 * 365 * DAY, NOW)).toBe('in 2 years');
  });

  it('switches unit where the rounded figure would mislead', () => {
    // 44 minutes is still minutes; 45 is "1 hour"; 21 hours still hours; 22 a day.
    expect(relativeTime(NOW - 44 * MIN, NOW)).toBe('44 minutes ago');
    expect(relativeTime(NOW - 45 * MIN, NOW)).toBe('1 hour ago');
    expect(relativeTime(NOW - 21 * HOUR, NOW)).toBe('21 hours ago');
    expect(relativeTime(NOW - 22 * HOUR, NOW)).toBe('1 day ago');
  });
});

describe('written by hand, as Intl writes them — property', () => {
  // format.ts writes these itself (Intl's format() costs microseconds a call, a page has dozens):
  // every output must be what Intl's en-US gives.
  const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [['minute', MIN], ['hour', HOUR], ['day', DAY], ['month', 30.44 * DAY], ['year', 365.25 * DAY]];

  it('relative times: each figure and unit, past and future', () => {
    for (const [unit, ms] of units) {
      for (const n of [1, 2, 3, 5, 10, 11, 20, 21, 25, 40, 44, 1000, 12_345]) {
        const delta = n * ms;
        const said = relativeTime(NOW + delta, NOW);
        const [, figure, word] = /^(?:in )?([\d,]+) (\w+?)s?(?: ago)?$/.exec(said) ?? [];
        expect(said, `${n} ${unit}`).toBe(rtf.format(Number(figure!.replace(/,/g, '')), word as Intl.RelativeTimeFormatUnit));
        expect(relativeTime(NOW - delta, NOW)).toBe(rtf.format(-Number(figure!.replace(/,/g, '')), word as Intl.RelativeTimeFormatUnit));
      }
    }
  });

  it('days, and counts with separators, over a range', () => {
    const short = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
    const long = new Intl.DateTimeFormat('en-US', { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
    for (let t = Date.parse('2026-12-25T00:00:00Z'); t < Date.parse('2029-03-05T00:00:00Z'); t += DAY) {
      const day = new Date(t).toISOString().slice(0, 10);
      expect(shortDay(day)).toBe(short.format(t));
      expect(longDay(day)).toBe(long.format(t));
    }
    const numbers = new Intl.NumberFormat('en-US');
    for (const n of [0, 1, -1, 12, 999, 1000, -1000, 9_999, 10_000, 123_456, 999_999, 1_000_000, -7_654_321, Number.MAX_SAFE_INTEGER]) expect(count(n)).toBe(numbers.format(n));
  });
});

describe('moments (the <time> element’s values) — happy and edge', () => {
  it('gives the instant, its exact words and its relative words', () => {
    expect(moment('2027-03-10T10:00:00Z', NOW)).toEqual({
      iso: '2027-03-10T10:00:00Z',
      exact: '2027-03-10 10:00 UTC',
      text: '2 hours ago',
      html: '<time datetime="2027-03-10T10:00:00Z" title="2027-03-10 10:00 UTC">2 hours ago</time>',
    });
    expect(moment(new Date('2027-03-11T00:00:00.000Z'), NOW).html).toBe('<time datetime="2027-03-11T00:00:00Z" title="2027-03-11 00:00 UTC">in 12 hours</time>');
  });

  it('no instant is the words given for it; a bad one is shown as it came, escaped, never a crash', () => {
    expect(moment(null, NOW, 'Never')).toEqual({ iso: '', exact: '', text: 'Never', html: 'Never' });
    expect(moment(undefined, NOW)).toEqual({ iso: '', exact: '', text: '', html: '' });
    expect(moment('not a time', NOW)).toEqual({ iso: '', exact: '', text: 'not a time', html: 'not a time' });
    expect(moment('<b>"x" & y</b>', NOW).html).toBe('&lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;');
    expect(exactTime('2027-01-02T03:04:59Z')).toBe('2027-01-02 03:04 UTC');
  });
});

describe('numbers, countries and languages — happy and edge', () => {
  it('writes counts with thousands separators', () => {
    expect(count(0)).toBe('0');
    expect(count(999)).toBe('999');
    expect(count(1234)).toBe('1,234');
    expect(count(1_234_567)).toBe('1,234,567');
  });

  it('names countries and languages by their codes, and leaves a code Intl does not know as it is', () => {
    expect(countryName('DE')).toBe('Germany');
    expect(countryName('us')).toBe('United States');
    expect(countryName('GB')).toBe('United Kingdom');
    expect(languageName('de')).toBe('German');
    expect(languageName('pt')).toBe('Portuguese');
    expect(countryName('AA')).toBe('AA');
    expect(languageName('qq')).toBe('qq');
    expect(languageName('1')).toBe('1');
    expect(countryName('')).toBe('');
    expect(languageName(null)).toBe('');
  });

  it('writes days for an axis and a table, and rounds money for an axis', () => {
    expect(shortDay('2027-03-03')).toBe('Mar 3');
    expect(longDay('2027-03-03')).toBe('Wed, Mar 3, 2027');
    expect(compactMoney(150_000, 'USD', 1)).toBe('$1.5K');
    expect(compactMoney(2_500, 'USD', 1)).toBe('$25');
    expect(compactMoney(0, 'USD', 1)).toBe('$0');
    expect(compactMoney(150_000, 'EUR', 0.5)).toBe('€750');
  });
});

describe('words for codes — happy and edge', () => {
  it('has words for every order state and event type, none of them a code', () => {
    for (const s of orderStatuses) expect(STATUS_WORDS[s]).toMatch(/^[A-Z][a-z ]+$/);
    for (const t of eventTypes) expect(EVENT_WORDS[t]).toMatch(/^[A-Z][a-z ]+$/);
    expect(statusWords('awaiting_content')).toBe('Awaiting content');
    expect(eventWords('order.placed')).toBe('Order placed');
    // A code a newer server sends is shown in words of its own, not as an error.
    expect(statusWords('on_hold')).toBe('on hold');
    expect(eventWords('order.put_on_hold')).toBe('put on hold');
  });

  it('names the action each open state asks of the side whose turn it is, and only of that side', () => {
    expect(actionWords('order.placed', 'awaiting_content', 'buyer')).toBe('Write the article');
    expect(actionWords('order.draft_submitted', 'draft_review', 'buyer')).toBe('Review the draft');
    expect(actionWords('order.placed', 'awaiting_acceptance', 'publisher')).toBe('Accept or decline the order');
    expect(actionWords('order.published', 'live_review', 'buyer')).toBe('Review the placement');
    expect(actionWords('order.link_lost', 'link_lost', 'publisher')).toBe('Restore the link');
    expect(actionWords('order.message_received', undefined, 'publisher')).toBe('Read the message and reply');
    for (const s of orderStatuses) {
      const side = turnOf[s];
      if (side) expect(actionWords('order.accepted', s, side), s).not.toBe('Open the order');
    }
    // The other side is never told to take a step that is not theirs.
    expect(actionWords('order.draft_submitted', 'draft_review', 'publisher')).toBe('Open the order');
  });
});

describe('chart geometry — happy and edge', () => {
  const points = (values: number[]) => values.map((v, i) => ({ key: `d${i}`, axis: `D${i}`, label: `Day ${i}`, value: v, count: v ? 1 : 0 }));
  const spec = (values: number[], limit?: number) => ({
    id: 'c',
    title: 'Spending',
    unit: 'day',
    points: points(values),
    money: (c: number) => `$${(c / 100).toFixed(2)}`,
    tick: (c: number) => `$${c / 100}`,
    limit: limit === undefined ? null : { value: limit, label: `Daily limit $${limit / 100}` },
    every: 2,
    columns: ['Day', 'Spent'] as [string, string],
  });

  it('rounds the axis up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect([1, 7, 12, 21, 24, 26, 51, 99, 100, 101].map(niceCeiling)).toEqual([1, 10, 20, 25, 25, 50, 100, 100, 100, 200]);
    expect(niceCeiling(0)).toBe(1);
  });

  it('draws a bar per day with spending, tallest for the most, and sums it up in words', () => {
    const c = barChart(spec([0, 5_000, 0, 10_000, 2_500]));
    expect(c.bars).toHaveLength(3);
    const heights = c.bars.map((b) => b.h);
    expect(Math.max(...heights)).toBe(heights[1]);
    expect(heights[1]).toBeCloseTo(heights[0]! * 2, 0);
    expect(c.summary).toBe('$175.00 in all over 5 days; 3 days with any, the most $100.00 (Day 3).');
    expect(c.rows.map((r) => r.value)).toEqual(['$0.00', '$50.00', '$0.00', '$100.00', '$25.00']);
    expect(c.total).toBe('$175.00');
    // Axis labels every 2nd bar, counted back from the last.
    expect(c.axis.map((a) => a.label)).toEqual(['D0', 'D2', 'D4']);
  });

  it('an empty window draws no bar and says so; a tiny amount is still a visible bar', () => {
    expect(barChart(spec([0, 0, 0])).bars).toEqual([]);
    expect(barChart(spec([0, 0, 0])).summary).toBe('$0.00 in all over 3 days; none in any day.');
    const tiny = barChart(spec([1, 1_000_000]));
    expect(tiny.bars[0]!.h).toBeGreaterThanOrEqual(1);
  });

  it('draws the limit across the bars, and a bar above it in the warning colour', () => {
    const c = barChart(spec([3_000, 6_000], 5_000));
    expect(c.limit!.label).toBe('Daily limit $50');
    expect(c.limit!.y).toBeGreaterThan(c.bars[1]!.y);
    expect(c.limit!.y).toBeLessThan(c.bars[0]!.y);
    expect(c.bars.map((b) => b.fill)).toEqual(['#0b5394', '#a4161a']);
    expect(c.summary).toContain('Daily limit $50');
  });

  it('a timeline fills the steps that happened and draws the line to the last of them', () => {
    const t = timelineChart({ id: 't', title: 'Timeline', summary: 'x', dots: [{ label: 'Placed', state: 'done' }, { label: 'Accepted', state: 'done' }, { label: 'Paid', state: 'todo' }] });
    expect(t.dots.map((d) => d.fill)).toEqual(['#0b5394', '#0b5394', '#ffffff']);
    expect(t.reached.x2).toBe(t.dots[1]!.cx);
    expect(t.line.x2).toBe(t.dots[2]!.cx);
  });
});
