// Builds dist/ with tsc only when a source file changed since the last build, so a second
// `npm start` starts in about a second.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'dist', '.build-stamp');

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function fingerprint() {
  const files = walk(join(root, 'src'), []).sort();
  files.push(join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json'), join(root, 'package-lock.json'));
  const hash = createHash('sha256');
  for (const f of files) {
    if (!existsSync(f)) continue;
    const s = statSync(f);
    hash.update(`${f}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/**
 * `check: false` emits without type-checking (tsc's noCheck): the same files, byte for byte (the
 * project compiles each file on its own, isolatedModules), in about a quarter of the CPU. The
 * test run builds so (its global setup): the types are checked by their own step (`npm run
 * typecheck`, and in CI before the tests), and the full check took about 30 CPU-seconds, alone,
 * before any test could start.
 */
export function buildIfNeeded({ check = true } = {}) {
  const current = fingerprint();
  const previous = existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : '';
  if (previous === current && existsSync(join(root, 'dist', 'src', 'server.js'))) return false;
  process.stderr.write('Building (TypeScript → dist/)…\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), ...(check ? [] : ['--noCheck'])], { stdio: 'inherit', cwd: root });
  writeFileSync(stampFile, current);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfNeeded({ check: !process.argv.includes('--no-check') });
