import { describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/schemas/pagination.js';

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

// meta.links as Laravel's UrlWindow (three on each side) lists them.
describe('pageWindow', () => {
  it('lists every page while there are fewer than 14', () => {
    expect(pageWindow(1, 1)).toEqual([1]);
    expect(pageWindow(5, 13)).toEqual(range(1, 13));
  });

  it('near the start: the first ten, then the last two', () => {
    expect(pageWindow(1, 150)).toEqual([...range(1, 10), '...', 149, 150]);
    expect(pageWindow(7, 150)).toEqual([...range(1, 10), '...', 149, 150]);
  });

  it('in the middle: the first two, three each side of the current page, the last two', () => {
    expect(pageWindow(8, 150)).toEqual([1, 2, '...', ...range(5, 11), '...', 149, 150]);
    expect(pageWindow(100, 150)).toEqual([1, 2, '...', ...range(97, 103), '...', 149, 150]);
    expect(pageWindow(143, 150)).toEqual([1, 2, '...', ...range(140, 146), '...', 149, 150]);
  });

  it('near the end, and past it: the first two, then the last ten', () => {
    expect(pageWindow(144, 150)).toEqual([1, 2, '...', ...range(141, 150)]);
    expect(pageWindow(500, 150)).toEqual([1, 2, '...', ...range(141, 150)]);
  });
});
