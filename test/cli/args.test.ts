import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/args.js';

// The CLI's flags as node:util parseArgs splits them and parseFlags pairs them; what each command
// takes is its schema's business (cli.test.ts runs those).

describe('parseFlags', () => {
  it.each([
    [['--name', 'x'], { name: 'x' }],
    [['--name=x'], { name: 'x' }],
    [['--name='], { name: '' }],
    [['--flag'], { flag: true }],
    // A value starting with a single dash is a value, so the schema names the bound.
    [['--cents', '-5'], { cents: '-5' }],
    [['--a', '-'], { a: '-' }],
    // A flag is never a value: `--a` stays bare, for the schema to say it needs one.
    [['--a', '--b', '5'], { a: true, b: '5' }],
    [['--a', '1', '--a', '2'], { a: ['1', '2'] }],
    [['--x', '-1', '--y', 'z'], { x: '-1', y: 'z' }],
    [['--constructor', '1'], { constructor: '1' }],
  ])('%j → %j', (args, flags) => {
    expect(parseFlags(args)).toEqual(flags);
  });

  it.each([
    [['stray'], 'stray'],
    [['--a', 'b', 'c'], 'c'],
    [['--a=1', 'b'], 'b'],
    [['--a', '--'], '--'],
    [['--', 'x'], '--'],
    [['-x'], '-x'],
  ])('%j: unexpected argument %j', (args, arg) => {
    expect(() => parseFlags(args)).toThrow(`unexpected argument ${JSON.stringify(arg)}`);
  });
});
