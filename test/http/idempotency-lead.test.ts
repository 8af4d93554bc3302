import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/keys/principal.js';
import { ManualClock } from '../helpers/clock.js';
import { errorHandling } from '../../src/http/plugins/errors.js';
import { idempotencyKeyCheck, idempotent } from '../../src/http/plugins/idempotency.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

// The idempotency plugin's lead statements, on a route of their own: the lead runs in the opening
// batch, its results reach the handler with or without a key, and a replay rolls its work back.
describe('idempotency lead statements', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let attempt = 0;
  const clock = new ManualClock(Date.UTC(2026, 10, 23));

  beforeAll(async () => {
    db = await createTestDatabase();
    app = Fastify();
    // As in the app: route schemas are zod (the idempotency plugin documents its header with one).
    app.setValidatorCompiler(validatorCompiler);
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request) => {
      request.principal = { keyId: 7 } as Principal;
    });
    await app.register(errorHandling, {});
    await app.register(idempotencyKeyCheck);
    app.post(
      '/lead',
      { config: { idempotency: 'optional' } },
      idempotent(
        { pool: db.pool, clock },
        async (request, _tx, { lead }) => ({ status: 201, body: { name: lead?.[0]?.rows[0]?.name, plus: lead?.[1]?.rows[0]?.v } }),
        // Each attempt writes a row of its own name: what a rolled-back attempt wrote must be gone.
        (request) => [
          {
            sql: { name: 'test_lead_write', types: ['text'], text: `INSERT INTO app_secrets (name, value) VALUES ($1, 'lead') RETURNING name` },
            values: [`lead-${++attempt}`],
          },
          { sql: { name: 'test_lead_read', types: ['int'], text: 'SELECT $1::int + 1 AS v' }, values: [(request.body as { n: number }).n] },
        ],
      ),
    );
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  const post = (n: number, key?: string) =>
    app.inject({ method: 'POST', url: '/lead', payload: { n }, headers: key ? { 'idempotency-key': key } : {} });
  const written = async () =>
    (await db.pool.query<{ name: string }>(`SELECT name FROM app_secrets WHERE name LIKE 'lead-%' ORDER BY name`)).rows.map((r) => r.name);

  it('hands every lead result to the handler, with and without an Idempotency-Key', async () => {
    const keyed = await post(41, 'lead-key');
    expect(keyed.statusCode).toBe(201);
    expect(keyed.json()).toEqual({ name: 'lead-1', plus: 42 });
    const bare = await post(9);
    expect(bare.json()).toEqual({ name: 'lead-2', plus: 10 });
    expect(await written()).toEqual(['lead-1', 'lead-2']);
  });

  it('rolls the lead back on a replay and on a key reused for another request', async () => {
    const replay = await post(41, 'lead-key');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual({ name: 'lead-1', plus: 42 });
    const reused = await post(5, 'lead-key');
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');
    // Attempts 3 and 4 ran their lead and rolled it back.
    expect(attempt).toBe(4);
    expect(await written()).toEqual(['lead-1', 'lead-2']);
  });
});
