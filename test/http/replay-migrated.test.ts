import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../src/paths.js';
import { migrateOnly } from '../../src/db/migrate.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { mcpHeaders, rpc } from '../mcp/helpers.js';

// Records written before migration 0031 held the answer as sent (status and JSON text; MCP: the
// tool's result); 0031 rewrites them as the domain's outcome. A retry that arrives after the
// upgrade must still get the first answer's bytes. Here the answers are recorded, the records put
// back in the old shape holding exactly those bytes, 0031 applied again, and the retries sent.
const h = await setupApp();
const q = (sql: string, values: unknown[] = []) => h.database.pool.query(sql, values);

describe('POST /api/v1/orders and MCP place-orders: a record kept before the outcome migration replays the same bytes after it — happy', () => {
  it('REST 201 and 402, MCP confirmed placement', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap' }]);
    const rich = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    const poor = await workspaceWithKeys(h.database.pool, { balanceCents: 100 });
    const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'our "product"' };
    const rest = (key: string, idem: string) =>
      h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: args });
    const mcp = (a: object) =>
      h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(rich.spendKey), payload: rpc('tools/call', { name: 'place-orders', arguments: a }, 5) });

    const placed = await rest(rich.spendKey, 'before-201');
    const refused = await rest(poor.spendKey, 'before-402');
    expect([placed.statusCode, refused.statusCode]).toEqual([201, 402]);
    const token = (await mcp(args)).json().result.structuredContent.confirmation_token as string;
    const confirmed = await mcp({ ...args, confirmation_token: token });
    const { replayed: _r, ...result } = confirmed.json().result.structuredContent;

    // The tables as they were before 0031, holding what the old code stored: the bytes sent.
    await q(`ALTER TABLE idempotency_records ADD COLUMN response_status int, ADD COLUMN response_body text`);
    await q(`UPDATE idempotency_records SET response_status = $2, response_body = $3 WHERE key = $1`, ['before-201', 201, placed.body]);
    await q(`UPDATE idempotency_records SET response_status = $2, response_body = $3 WHERE key = $1`, ['before-402', 402, refused.body]);
    await q(`ALTER TABLE idempotency_records DROP COLUMN outcome`);
    await q(`ALTER TABLE mcp_confirmations ADD COLUMN result json`);
    await q(`UPDATE mcp_confirmations SET result = $1::json`, [JSON.stringify(result)]);
    await q(`ALTER TABLE mcp_confirmations DROP COLUMN outcome`);
    // The console's book kept the new orders' ids ([5,6]); a replay reads each order's id.
    await q(`ALTER TABLE person_idempotency_records ADD COLUMN response_status int, ADD COLUMN response_body text, DROP COLUMN outcome`);
    await q(
      `INSERT INTO person_idempotency_records (user_id, key, fingerprint, response_status, response_body, created_at, expires_at)
       VALUES (1, 'before-person', 'f', 201, '[5,6]', now(), now() + interval '1 day')`,
    );
    // The migrations after 0031 undone, so that 0031 and they apply again (drizzle applies those
    // newer than the newest it recorded). 0034 (OAuth client secrets hashed) needs no undoing: it
    // changes nothing the second time.
    // 0038 (payouts): its tables, and the publishers' in_payout accounts (0037 makes the account kinds'
    // type anew without the value, which 0038 adds again). The transaction kinds it adds stay, added IF NOT EXISTS.
    await q(`DROP TABLE payouts, payout_destinations`);
    await q(`DROP TYPE payout_status`);
    await q(`DELETE FROM ledger_accounts WHERE kind = 'in_payout'`);
    // 0037 (funds): its tables and the staff column. The enum values it adds stay (a value cannot be
    // dropped): 0037 adds them again IF NOT EXISTS and makes the account kinds' type anew.
    await q(`DROP TABLE ledger_adjustments, top_up_requests`);
    await q(`DROP TYPE top_up_status`);
    await q(`ALTER TABLE users DROP COLUMN is_staff`);
    await q(`DROP TABLE event_cursors, notification_reminders, notification_digest_items`);
    await q(`ALTER TABLE memberships DROP COLUMN notifications`);
    await q(`DROP INDEX api_keys_expires_idx`);
    await q(`DROP TABLE approval_requests`);
    await q(`DROP TYPE approval_action, approval_status`);
    await q(`ALTER TABLE workspaces DROP COLUMN approval_above_cents`);
    await q(`ALTER TABLE api_keys DROP COLUMN needs_approval`);
    await q(`ALTER TABLE orders DROP COLUMN approval_request_id`);
    await q(`DROP TABLE user_tokens, mail_outbox`);
    await q(`DROP TYPE user_token_purpose, mail_status`);
    await q(`ALTER TABLE users DROP COLUMN email_verified_at`);
    await q(`ALTER TABLE api_keys DROP COLUMN created_by_user_id`);
    const since0031 = (JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { idx: number }[] }).entries.filter((e) => e.idx >= 31).length;
    await q(`DELETE FROM drizzle.__drizzle_migrations WHERE id IN (SELECT id FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT ${since0031})`);
    await migrateOnly(h.database.pool);
    const { rows } = await q(`SELECT count(*)::int AS n FROM idempotency_records WHERE outcome IS NOT NULL AND key LIKE 'before-%'`);
    expect(rows[0].n).toBe(2);
    const person = await q(`SELECT outcome FROM person_idempotency_records WHERE key = 'before-person'`);
    expect(JSON.parse(person.rows[0].outcome)).toEqual({ value: [{ id: 5 }, { id: 6 }] });

    for (const [first, again] of [
      [placed, await rest(rich.spendKey, 'before-201')],
      [refused, await rest(poor.spendKey, 'before-402')],
    ] as const) {
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.statusCode).toBe(first.statusCode);
      expect(again.body).toBe(first.body);
    }
    const replayed = await mcp({ ...args, confirmation_token: token });
    expect(replayed.json().result.structuredContent.replayed).toBe(true);
    expect(replayed.body.replaceAll('"replayed":true', '"replayed":false').replaceAll('\\"replayed\\":true', '\\"replayed\\":false')).toBe(confirmed.body);
  });
});
