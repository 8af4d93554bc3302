import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The checkout whose built server is under test: this one, or another one named by
 * `--server-root DIR` (which sets BENCH_SERVER_ROOT), e.g. a `git worktree` of an older commit,
 * built there with `npm ci && npm run build`. The ceiling server and the load always come from
 * this checkout, so two runs measure two servers with the same yardstick.
 */
export function serverRoot(): string {
  const given = process.env.BENCH_SERVER_ROOT?.trim();
  return given ? resolve(given) : join(import.meta.dirname, '..');
}

/** A module of the server under test's build, for a scenario's setup (the same code as the server). */
export const serverDist = (file: string) => pathToFileURL(join(serverRoot(), 'dist', 'src', file)).href;
