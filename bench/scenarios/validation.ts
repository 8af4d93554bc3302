import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import type { Scenario } from './types.js';

const PURCHASES = Number(process.env.BENCH_PURCHASES ?? 1_000_000);

// Interface B's hot path: the key and its limits come from memory, the purchase, its item and
// their currencies from one prepared statement (perf-notes: judged against one prepared SELECT),
// in a database holding a million purchases.
export const validation: Scenario = {
  name: 'validation',
  description: `POST /api/purchases/validation (JSON body) with the demo read-only key, ${PURCHASES.toLocaleString('en-US')} purchases in the database`,
  requests: (ctx) => [
    { method: 'POST', path: '/api/purchases/validation', json: { api_key: ctx.readOnlyKey, purchase_code: ctx.purchaseCode } },
  ],
  target: { ratio: 0.9, against: 'one-query' },
  setup: async (ctx) => {
    if (!ctx.purchaseCode) throw new Error('validation: the demo seed printed no purchase code');
    const client = new pg.Client({ connectionString: ctx.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT item_id, (SELECT count(*)::int FROM purchases) AS n FROM purchases WHERE code = $1', [ctx.purchaseCode]);
      const missing = PURCHASES - (rows[0]?.n ?? 0);
      if (missing > 0) {
        process.stderr.write(`validation: generating ${missing.toLocaleString('en-US')} purchases…\n`);
        // The admin CLI itself, as an operator would fill a database.
        execFileSync(
          process.execPath,
          [join(process.cwd(), 'dist/src/cli/run.js'), 'purchase', 'generate', '--item', String(rows[0].item_id), '--count', String(missing)],
          { env: { ...process.env, DATABASE_URL: ctx.databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'] },
        );
      }
      await client.query('VACUUM ANALYZE purchases');
    } finally {
      await client.end();
    }
  },
};
