import { describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { listEndpoints } from '../../src/domain/webhooks/endpoints.js';
import { topUpWorkspace } from '../../src/domain/workspaces/top-up.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { consoleClient } from './helpers.js';

// Settings → Webhooks through app.inject: the same domain functions as /api/v1/webhook-endpoints.

const h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: true, SIGNIN_FAILURES_PER_ADDRESS: 1000 });
const password = 'correct horse battery';
let n = 0;

async function member(workspaceId: number, role: 'owner' | 'member' | 'viewer') {
  n++;
  const email = `hooks${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name: `Hook person ${n}`, password });
  await addMember(h.database.pool, { workspaceId }, user.id, role);
  const c = consoleClient(h, `10.4.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return c;
}

const secretIn = (body: string) => /id="webhook-secret"[^>]*value="([^"]+)"/.exec(body)?.[1];

describe('Console webhooks page (/app/w/{id}/settings/webhooks) — happy', () => {
  it('create (secret shown once, no-store) → delivery log → resend → rotate → delete', async () => {
    const ws = await createWorkspace(h.database.pool, { name: 'Hooks C' });
    const owner = await member(ws.id, 'owner');
    const url = `/app/w/${ws.id}/settings/webhooks`;
    const created = await owner.post(url, { url: 'http://127.0.0.1:9/hook', events: 'workspace.topped_up' }, { from: url });
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const secret = secretIn(created.body)!;
    expect(secret).toMatch(/^whsec_/);
    const list = await owner.get(url);
    expect(list.body).toContain('workspace.topped_up');
    expect(list.body).not.toContain(secret);
    const [endpoint] = await listEndpoints(h.database.pool, { party: 'buyer', workspaceId: ws.id });
    expect(endpoint!.events).toEqual(['workspace.topped_up']);

    await topUpWorkspace(h.database.pool, ws.id, 5_000, h.clock.now());
    await sequenceEvents(h.database.pool, h.clock.now());
    const log = `${url}/${endpoint!.id}/deliveries`;
    const deliveries = await owner.get(log);
    expect(deliveries.body).toContain('1 deliveries');
    const deliveryId = /deliveries\/(\d+)\/resend/.exec(deliveries.body)![1];
    const resent = await owner.post(`${log}/${deliveryId}/resend`, {}, { from: log });
    expect(resent.statusCode).toBe(200);
    expect(resent.body).toContain('2 deliveries');
    expect((await owner.post(`${log}/999999/resend`, {}, { from: log })).statusCode).toBe(404);

    const rotated = await owner.post(`${url}/${endpoint!.id}/rotate`, {}, { from: `${url}/${endpoint!.id}/rotate` });
    expect(rotated.statusCode).toBe(200);
    const second = secretIn(rotated.body)!;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(secret);
    expect(h.logs.join('')).not.toContain(second);

    const deleted = await owner.post(`${url}/${endpoint!.id}/delete`, {}, { from: `${url}/${endpoint!.id}/delete` });
    expect(deleted.body).toContain('Endpoint deleted');
    expect(await listEndpoints(h.database.pool, { party: 'buyer', workspaceId: ws.id })).toEqual([]);
  });
});

describe('Console webhooks page (/app/w/{id}/settings/webhooks): private URLs and roles — security', () => {
  it('refuses a private URL naming the field; a member sees endpoints but cannot change them (403)', async () => {
    const ws = await createWorkspace(h.database.pool, { name: 'Hooks A' });
    const owner = await member(ws.id, 'owner');
    const url = `/app/w/${ws.id}/settings/webhooks`;
    const bad = await owner.post(url, { url: 'http://10.0.0.1/hook' }, { from: url });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('The endpoint was not created');
    expect(bad.body).toContain('aria-invalid="true"');
    expect(await listEndpoints(h.database.pool, { party: 'buyer', workspaceId: ws.id })).toEqual([]);

    await owner.post(url, { url: 'http://127.0.0.1:9/hook' }, { from: url });
    const [endpoint] = await listEndpoints(h.database.pool, { party: 'buyer', workspaceId: ws.id });
    const m = await member(ws.id, 'member');
    const seen = await m.get(url);
    expect(seen.body).toContain('http://127.0.0.1:9/hook');
    expect(seen.body).not.toContain('Create endpoint');
    expect((await m.post(url, { url: 'http://127.0.0.1:9/other' }, { from: url })).statusCode).toBe(403);
    expect((await m.post(`${url}/${endpoint!.id}/delete`, {}, { from: url })).statusCode).toBe(403);
    expect((await m.post(`${url}/${endpoint!.id}/rotate`, {}, { from: url })).statusCode).toBe(403);
    expect((await m.get(`${url}/${endpoint!.id}/deliveries`)).statusCode).toBe(200);

    // Another workspace's endpoint id is not found, for its owner too.
    const other = await createWorkspace(h.database.pool, { name: 'Hooks B' });
    const otherOwner = await member(other.id, 'owner');
    const otherUrl = `/app/w/${other.id}/settings/webhooks`;
    expect((await otherOwner.get(`${otherUrl}/${endpoint!.id}/deliveries`)).statusCode).toBe(404);
    expect((await otherOwner.post(`${otherUrl}/${endpoint!.id}/delete`, {}, { from: otherUrl })).statusCode).toBe(404);
    expect(await listEndpoints(h.database.pool, { party: 'buyer', workspaceId: ws.id })).toHaveLength(1);
  });
});
