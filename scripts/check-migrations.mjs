// Fails when src/db/schema has changes that no committed migration holds: drizzle-kit generates
// into a scratch copy of migrations/ and must find nothing to write.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'mkt-migrations-'));
try {
  cpSync(join(root, 'migrations'), join(scratch, 'migrations'), { recursive: true });
  const config = join(root, `.drizzle-check-${process.pid}.config.ts`);
  writeFileSync(
    config,
    // drizzle-kit resolves `out` relative to the working directory, even an absolute one.
    `import base from './drizzle.config';\nexport default { ...base, out: ${JSON.stringify(relative(root, join(scratch, 'migrations')))} };\n`,
  );
  try {
    const before = readdirSync(join(scratch, 'migrations')).length;
    const out = execFileSync(join(root, 'node_modules', '.bin', 'drizzle-kit'), ['generate', '--config', config], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const after = readdirSync(join(scratch, 'migrations')).length;
    if (after !== before) {
      process.stderr.write(out + '\nThe schema has changes with no migration: run `npx drizzle-kit generate` and commit migrations/.\n');
      process.exit(1);
    }
    process.stdout.write('migrations are up to date with the schema\n');
  } finally {
    rmSync(config, { force: true });
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
