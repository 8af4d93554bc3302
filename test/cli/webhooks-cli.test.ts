import { afterAll, describe, expect, it } from 'vitest';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { cliJson, type CliResult } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';

// webhook create|list|delete|rotate-secret and the top-up's event (docs/cli.md), in process.

const database = await createTestDatabase({ max: 2 });
afterAll(() => database.drop());
const env = { DATABASE_URL: database.url, OUTBOUND_ALLOW_LOOPBACK: 'true' };
const admin = async (...args: string[]): Promise<CliResult> => {
  const r = await runCli(args, env);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const ok = async (...args: string[]) => cliJson(await admin(...args));

describe('webhook commands', () => {
  it('create shows the secret once; list, rotate-secret and delete by id', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const created = await ok('webhook', 'create', '--workspace', String(ws.workspaceId), '--url', 'http://127.0.0.1:9/hook', '--event', 'order.accepted', '--event', 'order.published');
    expect(created).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['order.accepted', 'order.published'], disabled_at: null, secret: expect.stringMatching(/^whsec_/) });
    expect(await ok('webhook', 'list', '--workspace', String(ws.workspaceId))).toEqual({ data: [{ id: created.id, url: created.url, events: created.events, disabled_at: null, created_at: created.created_at }] });
    const rotated = await ok('webhook', 'rotate-secret', '--id', String(created.id));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    // Both are kept encrypted; the previous one is the secret made at creation.
    const { rows } = await database.pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [created.id]);
    expect(rows[0].previous_secret).not.toContain(String(created.secret).slice(6));
    expect(await webhookSecretBox(database.pool, undefined).open(rows[0].previous_secret)).toBe(created.secret);
    expect(await webhookSecretBox(database.pool, undefined).open(rows[0].secret)).toBe(rotated.secret);
    expect(await ok('webhook', 'delete', '--id', String(created.id))).toEqual({ deleted: created.id });
    expect(await ok('webhook', 'list', '--workspace', String(ws.workspaceId))).toEqual({ data: [] });
  });

  it('publisher endpoints, every type by default', async () => {
    const p = await publisherWithOutlet(database);
    const created = await ok('webhook', 'create', '--publisher', String(p.publisherId), '--url', 'http://localhost:9/hook');
    expect(created.events).toBeNull();
  });

  it('refuses bad input naming the flag', async () => {
    const ws = await workspaceWithKeys(database.pool);
    for (const [args, says] of [
      [['webhook', 'create', '--url', 'https://93.184.216.34/'], /exactly one of --workspace or --publisher/],
      [['webhook', 'create', '--workspace', String(ws.workspaceId), '--url', 'https://10.0.0.1/'], /^--url: must resolve to public/],
      [['webhook', 'create', '--workspace', String(ws.workspaceId), '--url', 'https://93.184.216.34/ a'], /^--url: must not contain whitespace/],
      [['webhook', 'create', '--workspace', String(ws.workspaceId), '--url', 'https://93.184.216.34/', '--event', 'nope'], /^--event: must be one of/],
      [['webhook', 'delete', '--id', '999999'], /not found/i],
    ] as const) {
      const r = await admin(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(says);
    }
  });

  it('refuses a loopback URL without OUTBOUND_ALLOW_LOOPBACK, naming that setting (as the API does)', async () => {
    const ws = await workspaceWithKeys(database.pool);
    for (const url of ['http://127.0.0.1:9/hook', 'https://localhost/hook', 'https://[::1]/hook']) {
      const r = await runCli(['webhook', 'create', '--workspace', String(ws.workspaceId), '--url', url], { DATABASE_URL: database.url });
      expect(r.status, url).toBe(1);
      expect(r.stderr.trim(), url).toMatch(/^--url: must resolve to public addresses only \(loopback is allowed only when the server runs with OUTBOUND_ALLOW_LOOPBACK=true/);
    }
  });

  it('workspace top-up records workspace.topped_up with the money moved', async () => {
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 1_000 });
    expect(await ok('workspace', 'top-up', '--workspace', String(ws.workspaceId), '--cents', '500')).toEqual({ balance_cents: 1_500 });
    const { rows } = await database.pool.query(`SELECT type, actor, data FROM events WHERE workspace_id = $1`, [ws.workspaceId]);
    expect(rows).toEqual([{ type: 'workspace.topped_up', actor: 'system', data: expect.objectContaining({ amount: 500, balance: 1_500 }) }]);
  });
});
