import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/paths.js';

// The page pool from JavaScript, as the built server runs it (dist/: page-worker.js beside
// page-pool.js, no tsx): the placement modules compiled one by one as `npm run build` compiles
// them, then used from a plain node process. Under vitest (TypeScript) every link check test
// already uses the pool through tsx.

const MODULES = ['page-pool', 'page-worker', 'live-checks', 'page-scan', 'disclosure-words', 'link-url'];
const cache = join(projectRoot, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const out = mkdtempSync(join(cache, 'built-pool-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the page pool, built', () => {
  it('reads a page in a worker thread from the compiled JavaScript', async () => {
    const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(join(projectRoot, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, projectRoot);
    for (const name of MODULES) {
      const file = join('src', 'domain', 'placements', `${name}.ts`);
      // ES modules, as the package's "type": "module" makes the build's output.
      const compilerOptions = { ...options, module: ts.ModuleKind.ESNext };
      const { outputText } = ts.transpileModule(readFileSync(join(projectRoot, file), 'utf8'), { compilerOptions, fileName: file });
      const target = join(out, file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, outputText);
    }
    const script = `
      const { createPagePool } = await import(${JSON.stringify(join(out, 'src/domain/placements/page-pool.js'))});
      const pool = createPagePool();
      const T = 'https://buyer.example/product';
      const page = { ok: true, status: 200, finalUrl: 'https://o.example/p', headers: {}, body: '<p><a href="' + T + '" rel="noopener,nofollow">our product</a></p>', redirects: [] };
      const checks = await pool.check(page, { liveUrl: page.finalUrl, targetUrl: T, anchorText: 'our product', linkType: 'dofollow', sponsoredLabel: false, outletDomain: 'o.example', language: 'en' });
      await pool.close();
      console.log(JSON.stringify(checks.map((c) => [c.name, c.status])));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: projectRoot, env: { ...process.env, NODE_OPTIONS: '' } });
    expect(JSON.parse(stdout)).toEqual([
      ['page', 'pass'],
      ['domain', 'pass'],
      ['link', 'pass'],
      ['anchor', 'pass'],
      ['rel', 'fail'],
      ['indexable', 'pass'],
    ]);
  });
});
