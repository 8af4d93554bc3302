import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { connect, fails, listen } from '../mcp/helpers.js';

// While the search index loads there is no second engine to answer: the process is not ready
// (/readyz 503) and a search, REST, MCP or a plan, is a 503 with Retry-After. Here the load is
// held back by a lock on the outlets table taken before the app starts.

const database = await createTestDatabase();
const ws = await workspaceWithKeys(database.pool);
const blocker = new pg.Client({ connectionString: database.url });
await blocker.connect();
await blocker.query('BEGIN');
await blocker.query('LOCK TABLE outlets IN ACCESS EXCLUSIVE MODE');
const h = await setupApp({}, { database, searchLoaded: false });

describe('GET /api/v1/outlets, POST /api/v1/plan and GET /readyz while the search index loads: 503 — errors', () => {
  it('is not ready, and searches and plans answer 503 with Retry-After; once loaded, 200', async () => {
    expect(h.app.searchEngine.ready).toBe(false);
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);

    const search = await h.app.inject({ method: 'GET', url: '/api/v1/outlets?q=travel', headers: bearer(ws.readKey) });
    expect(search.statusCode).toBe(503);
    expect(search.headers['retry-after']).toBe('5');
    expect(search.json()).toMatchObject({ code: 'unavailable' });
    expect(search.body).not.toMatch(/outlets_changed|SELECT|stack/i);

    const plan = await h.app.inject({
      method: 'POST',
      url: '/api/v1/plan',
      headers: bearer(ws.readKey),
      payload: { goal: 'launch a travel app', budget_usd: 500 },
    });
    expect(plan.statusCode).toBe(503);
    expect(plan.headers['retry-after']).toBe('5');

    const client = await connect(await listen(h), ws.readKey);
    await fails(client, 'search-outlets', { q: 'travel' }, 'unavailable');

    await blocker.query('COMMIT');
    await blocker.end();
    for (let i = 0; !h.app.searchEngine.ready; i++) {
      if (i > 400) throw new Error('the search index never loaded');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/outlets?q=travel', headers: bearer(ws.readKey) })).statusCode).toBe(200);
  });
});
