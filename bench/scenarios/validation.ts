import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import type { BenchContext, BenchRequest, Scenario } from './types.js';

const PURCHASES = Number(process.env.BENCH_PURCHASES ?? 1_000_000);

// Interface B's hot path: the key and its limits come from memory, the purchase, its item and
// their currencies from one prepared statement (perf-notes: judged against one prepared SELECT),
// in a database holding a million purchases.
async function fillPurchases(ctx: BenchContext): Promise<void> {
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
    // Codes spread over the whole table, for the scenarios that send many distinct ones.
    const sample = await client.query<{ code: string }>(
      `SELECT code FROM purchases TABLESAMPLE SYSTEM (2) WHERE refunded_at IS NULL LIMIT ${CODES}`,
    );
    codes = sample.rows.map((r) => r.code);
  } finally {
    await client.end();
  }
}

const CODES = 10_000;
let codes: string[] = [];

export const validation: Scenario = {
  name: 'validation',
  description: `POST /api/purchases/validation (JSON body) with the demo read-only key, ${PURCHASES.toLocaleString('en-US')} purchases in the database`,
  requests: (ctx) => [
    { method: 'POST', path: '/api/purchases/validation', json: { api_key: ctx.readOnlyKey, purchase_code: ctx.purchaseCode } },
  ],
  target: { ratio: 0.9, against: 'one-query' },
  setup: fillPurchases,
};

// What sellers' servers send: a form body (PHP's curl posts one), a different code each request.
export const validationForm: Scenario = {
  name: 'validation-form',
  description: `POST /api/purchases/validation (form body), ${CODES.toLocaleString('en-US')} distinct codes spread over ${PURCHASES.toLocaleString('en-US')} purchases`,
  requests: (ctx) => [formRequest(ctx.readOnlyKey, ctx.purchaseCode!)],
  connectionRequests: (ctx) => {
    const lists: BenchRequest[][] = Array.from({ length: 50 }, () => []);
    codes.forEach((code, i) => lists[i % lists.length]!.push(formRequest(ctx.readOnlyKey, code)));
    return lists.filter((l) => l.length > 0);
  },
  target: { ratio: 0.9, against: 'one-query' },
  setup: fillPurchases,
};

function formRequest(key: string, code: string): BenchRequest {
  return {
    method: 'POST',
    path: '/api/purchases/validation',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `api_key=${encodeURIComponent(key)}&purchase_code=${encodeURIComponent(code)}`,
  };
}
