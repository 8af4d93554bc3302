import { describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { webhookSecretBox } from '../../../src/domain/webhooks/secret-box.js';
import { topUpWorkspace } from '../../../src/domain/workspaces/top-up.js';
import { webhookEndpointWithSecret } from '../../../src/schemas/events.js';
import { setupApp } from '../../helpers/app.js';
import { bearer, workspaceWithKeys } from '../../helpers/fixtures.js';
import { LiveClock, type Received, startReceiver } from '../../helpers/receiver.js';

// Webhook signing secrets are kept encrypted (docs/events.md): the service must read them back
// to sign, so they cannot be hashed; a row of the table alone gives no secret away. Rows written
// in plain text before keep signing and are sealed by the event worker.

const h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: true, EVENTS_POLL_INTERVAL_MS: 20, WEBHOOK_RETRY_BASE_MS: 20, WEBHOOK_TIMEOUT_MS: 60_000 }, { clock: new LiveClock() });
const HANG = { timeout: 15_000, interval: 20 };
const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string };
const stored = async (id: number) =>
  (await h.database.pool.query<{ secret: string; previous_secret: string | null }>('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [id])).rows[0]!;
/** A top-up's event, delivered: the one request of its webhook-id. */
async function toppedUp(hook: Awaited<ReturnType<typeof startReceiver>>, workspaceId: number) {
  const before = hook.received.length;
  await topUpWorkspace(h.database.pool, workspaceId, 1_000, h.clock.now());
  await vi.waitFor(() => expect(hook.received.length).toBeGreaterThan(before), HANG);
  return hook.received.at(-1)!;
}

describe('webhook signing secrets at rest — security', () => {
  it('are stored encrypted, the rotated one too, and still sign every delivery', async () => {
    const hook = await startReceiver();
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url: hook.url() } });
    expect(res.statusCode, res.body).toBe(201);
    const endpoint = webhookEndpointWithSecret.parse(res.json().data);
    const row = await stored(endpoint.id);
    expect(row.secret).not.toContain(endpoint.secret.slice(6));
    expect(row.secret).not.toMatch(/^whsec_/);
    expect(verify(endpoint.secret, await toppedUp(hook, ws.workspaceId)).type).toBe('workspace.topped_up');

    const rotated = await h.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: bearer(ws.readKey) });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newSecret = rotated.json().data.secret as string;
    const after = await stored(endpoint.id);
    for (const value of [after.secret, after.previous_secret!]) {
      expect(value).not.toMatch(/^whsec_/);
      expect(value).not.toContain(newSecret.slice(6));
      expect(value).not.toContain(endpoint.secret.slice(6));
    }
    // During the overlap both sign: the receiver may hold either.
    const signed = await toppedUp(hook, ws.workspaceId);
    verify(newSecret, signed);
    verify(endpoint.secret, signed);
    // No log line holds either secret.
    const logs = h.logs.join('');
    for (const s of [endpoint.secret, newSecret]) expect(logs).not.toContain(s.slice(6));
  });

  it('the answer kept for an Idempotency-Key holds the secret encrypted, and its replay answers the same secret', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const create = () =>
      h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: { ...bearer(ws.readKey), 'idempotency-key': 'kept-secret-1' }, payload: { url: 'http://127.0.0.1:9/kept' } });
    const first = await create();
    expect(first.statusCode, first.body).toBe(201);
    const secret = first.json().data.secret as string;
    const replay = await create();
    expect(replay.json().data.secret).toBe(secret);
    const rotate = () =>
      h.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${first.json().data.id}/rotate-secret`, headers: { ...bearer(ws.readKey), 'idempotency-key': 'kept-secret-2' } });
    const rotated = (await rotate()).json().data.secret as string;
    expect((await rotate()).json().data.secret).toBe(rotated);
    const { rows } = await h.database.pool.query<{ outcome: string }>('SELECT outcome::text AS outcome FROM idempotency_records WHERE key IN ($1, $2)', ['kept-secret-1', 'kept-secret-2']);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.outcome).not.toContain(secret.slice(6));
      expect(r.outcome).not.toContain(rotated.slice(6));
    }
  });

  it('a row kept in plain text from before still signs, and is then stored encrypted', async () => {
    const hook = await startReceiver();
    const ws = await workspaceWithKeys(h.database.pool);
    const plain = `whsec_${Buffer.from('a plain secret of thirty-two byte').toString('base64')}`;
    const { rows } = await h.database.pool.query<{ id: number }>(
      `INSERT INTO webhook_endpoints (workspace_id, url, secret, previous_secret, previous_secret_expires_at, created_at)
       VALUES ($1, $2, $3, $3, now() + interval '1 hour', now()) RETURNING id`,
      [ws.workspaceId, hook.url(), plain],
    );
    const id = rows[0]!.id;
    verify(plain, await toppedUp(hook, ws.workspaceId));
    await vi.waitFor(async () => {
      const row = await stored(id);
      expect(row.secret).not.toMatch(/^whsec_/);
      expect(row.previous_secret).not.toMatch(/^whsec_/);
    }, HANG);
    verify(plain, await toppedUp(hook, ws.workspaceId));
  });

  it('sealed with the stored key, a secret still opens once SECRETS_KEY is set (and the other way it does not)', async () => {
    const byStoredKey = webhookSecretBox(h.database.pool, undefined);
    const byConfigured = webhookSecretBox(h.database.pool, 'a configured key of at least 32 characters');
    const secret = `whsec_${Buffer.from('another secret of thirty-two byt').toString('base64')}`;
    const sealed = await byStoredKey.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(await byStoredKey.open(sealed)).toBe(secret);
    expect(await byConfigured.open(sealed)).toBe(secret);
    const sealedByConfigured = await byConfigured.seal(secret);
    expect(await byConfigured.open(sealedByConfigured)).toBe(secret);
    await expect(byStoredKey.open(sealedByConfigured)).rejects.toThrow(/SECRETS_KEY/);
    // Plain text from before opens as it is; a sealed value altered does not open.
    expect(await byStoredKey.open(secret)).toBe(secret);
    await expect(byStoredKey.open(`${sealed.slice(0, -2)}AA`)).rejects.toThrow();
  });
});
