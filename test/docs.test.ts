import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';

// The docs cite only what the repository holds: every relative link and every `src/…`-style path
// in backticks names a file or folder that exists.

const docs = [
  'README.md',
  ...readdirSync(join(projectRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(projectRoot, 'bench')).filter((f) => f.endsWith('.md')).map((f) => `bench/${f}`),
];

describe('docs', () => {
  it.each(docs)('%s cites only files the repository holds', (doc) => {
    const text = readFileSync(join(projectRoot, doc), 'utf8');
    const missing: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      if (!existsSync(join(projectRoot, dirname(doc), target!))) missing.push(target!);
    }
    for (const [, path] of text.matchAll(/`((?:src|test|bench|scripts|docs|migrations)\/[^`\s]+)`/g)) {
      if (/[*<>{}…]/.test(path!)) continue;
      if (!existsSync(join(projectRoot, path!.replace(/:\d+$/, '')))) missing.push(path!);
    }
    expect(missing).toEqual([]);
  });

  it('the README is a front door of at most 200 lines', () => {
    expect(readFileSync(join(projectRoot, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(201);
  });
});
