import { describe, expect, it } from 'vitest';
import { rollKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();
const HOUR = 3_600_000;
const me = (key: string) => h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
const account = (key: string) => h.app.inject({ method: 'GET', url: `/api/account/details?api_key=${key}` });

describe('Buyer and seller API routes: a key past its expiry answers like a revoked key — security', () => {
  it('on Interface A and Interface B, at the end of a roll grace, with the key in the cache', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    expect((await me(ws.readKey)).statusCode).toBe(200);
    expect((await account(ws.readKey)).statusCode).toBe(200);
    const rolled = await rollKey(h.database.pool, { workspaceId: ws.workspaceId }, ws.readKeyId, 1, h.clock);
    expect((await me(rolled.key)).statusCode).toBe(200);

    h.clock.advance(HOUR - 1);
    expect((await me(ws.readKey)).statusCode).toBe(200);
    expect((await account(ws.readKey)).statusCode).toBe(200);
    h.clock.advance(1);
    const res = await me(ws.readKey);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'unauthenticated' });
    expect((await account(ws.readKey)).statusCode).toBe(401);
    expect((await me(rolled.key)).statusCode).toBe(200);
  });
});
