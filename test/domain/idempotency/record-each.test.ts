import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config.js';
import type { Db } from '../../../src/db/handle.js';
import { DomainError, invalidInput } from '../../../src/domain/errors.js';
import { sql, statement } from '../../../src/db/sql.js';
import { type ClaimRow, type ClaimsInRead, claimsWith, type EachItem, type Outcome, recordEach, recordsWith, RETENTION_MS } from '../../../src/domain/idempotency/record-once.js';
import { place, placementGroups } from '../../../src/domain/orders/place-orders.js';
import type { PlaceOrdersInput } from '../../../src/domain/orders/placement-rules.js';
import { durationsFrom } from '../../../src/domain/orders/states.js';
import { publisherWithOutlet } from '../../helpers/catalog.js';
import { createTestDatabase } from '../../helpers/db.js';
import { workspaceWithKeys } from '../../helpers/fixtures.js';

// A group claims its keys and looks up their records in one statement, whose snapshot is taken
// before the claims: a record the key's last holder committed in between is missed. These tests
// commit such a record from another connection once the work has claimed (as if it had been
// committed just before the claim) and check that no item is answered other than it would be
// alone: a kept outcome fails the whole group (nothing it wrote remains), a refusal not kept is
// answered with the record.

const database = await createTestDatabase({ max: 4 });
afterAll(() => database.drop());

const NOW = Date.parse('2026-11-27T12:00:00Z');
const keeps = (e: DomainError) => e.code === 'insufficient_balance';
let apiKeyId = 0;
let n = 0;

beforeAll(async () => {
  apiKeyId = (await workspaceWithKeys(database.pool)).spendKeyId;
  await database.pool.query('CREATE TABLE each_work (note text NOT NULL)');
});

const item = (key: string, fingerprint = 'fp'): EachItem => ({ key: { book: 'request', apiKeyId, key, fingerprint, requestId: `req-${++n}` }, keeps });
const freshKey = () => `key-${++n}`;

/** Commits a live record for `key` from a connection of its own, as the key's last holder would have. */
async function commitRecordElsewhere(key: string, outcome: unknown, fingerprint = 'fp', keyId = apiKeyId) {
  const c = new pg.Client({ connectionString: database.url });
  await c.connect();
  try {
    await c.query(
      `INSERT INTO idempotency_records (api_key_id, key, fingerprint, outcome, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [keyId, key, fingerprint, JSON.stringify(outcome), new Date(NOW - 1000), new Date(NOW - 1000 + RETENTION_MS)],
    );
  } finally {
    await c.end();
  }
}

const notes = async () => (await database.pool.query<{ note: string }>('SELECT note FROM each_work ORDER BY note')).rows.map((r) => r.note);
const recordOf = async (key: string) =>
  (await database.pool.query<{ outcome: string }>('SELECT outcome FROM idempotency_records WHERE api_key_id = $1 AND key = $2', [apiKeyId, key])).rows[0]?.outcome;

/** A work that claims, writes a note per admitted item and answers `answer(i)`, committing `before` after its claims. */
const noting =
  (keys: string[], answer: (i: number) => Outcome<string>, before: () => Promise<void> = async () => {}) =>
  async (tx: Db, claims: ClaimsInRead) => {
    const admitted = await claims.admit();
    await before();
    await tx.query('INSERT INTO each_work (note) SELECT unnest($1::text[])', [admitted.map((i) => keys[i]!)]);
    return admitted.map(answer);
  };

describe('recordEach: a record the claim did not see', () => {
  it('a kept outcome whose key holds a record by now: the whole group fails, nothing it wrote remains', async () => {
    const keys = [freshKey(), freshKey()];
    const work = noting(keys, (i) => ({ ok: true, value: `new ${i}` }), () => commitRecordElsewhere(keys[1]!, { value: 'first' }));
    await expect(recordEach(database.pool, keys.map((k) => item(k)), NOW, work)).rejects.toThrow(/holds a record its claim did not see/);
    expect(await notes()).not.toContain(keys[0]);
    expect(await recordOf(keys[0]!)).toBeUndefined();
    // The record that was there stays as it was.
    expect(await recordOf(keys[1]!)).toBe(JSON.stringify({ value: 'first' }));
  });

  it('likewise when the records go in the work’s own statement (a kept refusal among them)', async () => {
    const keys = [freshKey(), freshKey(), freshKey()];
    const outcomes: Array<Outcome<string>> = [
      { ok: true, value: 'placed' },
      { ok: false, error: new DomainError('insufficient_balance', 'short') },
      { ok: true, value: 'placed too' },
    ];
    const results = recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims, records) => {
      const admitted = await claims.admit();
      await commitRecordElsewhere(keys[2]!, { value: 'first' });
      const answered = admitted.map((i) => outcomes[i]!);
      await records.commitWith(tx, [
        statement(sql`WITH notes AS (INSERT INTO each_work (note) SELECT unnest(${admitted.map((i) => keys[i]!)}::text[])), ${recordsWith(records.values(answered))} SELECT 1`, 'each_work'),
      ]);
      return answered;
    });
    await expect(results).rejects.toThrow(/holds a record its claim did not see/);
    expect(await notes()).not.toContain(keys[0]);
    expect(await recordOf(keys[0]!)).toBeUndefined();
    expect(await recordOf(keys[1]!)).toBeUndefined();
    expect(await recordOf(keys[2]!)).toBe(JSON.stringify({ value: 'first' }));
  });

  it('the records in the work’s own statement, none missed: the kept ones stored, each answered', async () => {
    const keys = [freshKey(), freshKey(), freshKey()];
    const outcomes: Array<Outcome<string>> = [
      { ok: true, value: 'placed' },
      { ok: false, error: new DomainError('insufficient_balance', 'short') },
      { ok: false, error: invalidInput({ offer_ids: ['unknown'] }) },
    ];
    const results = await recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims, records) => {
      const admitted = await claims.admit();
      const answered = admitted.map((i) => outcomes[i]!);
      await records.commitWith(tx, [
        statement(sql`WITH notes AS (INSERT INTO each_work (note) SELECT unnest(${admitted.map((i) => keys[i]!)}::text[])), ${recordsWith(records.values(answered))} SELECT 1`, 'each_work'),
      ]);
      return answered;
    });
    expect(results.map((r) => (r.ok ? (r.value.ok ? r.value.value : r.value.error.code) : (r.error as DomainError).code))).toEqual([
      'placed',
      'insufficient_balance',
      'invalid_input',
    ]);
    expect(JSON.parse((await recordOf(keys[0]!))!)).toEqual({ value: 'placed' });
    expect(JSON.parse((await recordOf(keys[1]!))!).error.code).toBe('insufficient_balance');
    expect(await recordOf(keys[2]!)).toBeUndefined();
  });

  it('a work that says it wrote the records of other outcomes than it answers fails the group', async () => {
    const keys = [freshKey()];
    const results = recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims, records) => {
      const admitted = await claims.admit();
      // Sent without ending the transaction: the check comes before COMMIT.
      await records.send(tx, [statement(sql`WITH ${recordsWith(records.values([{ ok: true, value: 'one thing' }]))} SELECT 1`, 'each_work')]);
      return admitted.map(() => ({ ok: true as const, value: 'another' }));
    });
    await expect(results).rejects.toThrow(/other outcomes/);
    expect(await recordOf(keys[0]!)).toBeUndefined();
  });

  it('a refusal not kept whose key holds a record by now is answered with the record; the others go on', async () => {
    const keys = [freshKey(), freshKey()];
    const answer = (i: number): Outcome<string> => (i === 0 ? { ok: true, value: 'placed' } : { ok: false, error: invalidInput({ offer_ids: ['unknown'] }) });
    const results = await recordEach(
      database.pool,
      keys.map((k) => item(k)),
      NOW,
      noting(keys, answer, () => commitRecordElsewhere(keys[1]!, { value: 'first' })),
    );
    expect(results[0]).toEqual({ ok: true, value: { ok: true, value: 'placed', replayed: false, requestId: expect.any(String) } });
    expect(results[1]).toEqual({ ok: true, value: { ok: true, value: 'first', replayed: true } });
    expect(await notes()).toEqual(expect.arrayContaining(keys));
    expect(JSON.parse((await recordOf(keys[0]!))!)).toEqual({ value: 'placed' });
    expect(await recordOf(keys[1]!)).toBe(JSON.stringify({ value: 'first' }));
  });

  it('likewise when the records go with COMMIT: the refusal’s key is looked up in the same round trip', async () => {
    const keys = [freshKey(), freshKey()];
    const answer = (i: number): Outcome<string> => (i === 0 ? { ok: true, value: 'placed' } : { ok: false, error: invalidInput({ offer_ids: ['unknown'] }) });
    const results = await recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims, records) => {
      const admitted = await claims.admit();
      await commitRecordElsewhere(keys[1]!, { value: 'first' });
      const answered = admitted.map(answer);
      await records.commitWith(tx, [
        statement(sql`WITH notes AS (INSERT INTO each_work (note) SELECT unnest(${admitted.map((i) => keys[i]!)}::text[])), ${recordsWith(records.values(answered))} SELECT 1`, 'each_work'),
      ]);
      return answered;
    });
    expect(results[0]).toEqual({ ok: true, value: { ok: true, value: 'placed', replayed: false, requestId: expect.any(String) } });
    expect(results[1]).toEqual({ ok: true, value: { ok: true, value: 'first', replayed: true } });
    expect(JSON.parse((await recordOf(keys[0]!))!)).toEqual({ value: 'placed' });
    expect(await recordOf(keys[1]!)).toBe(JSON.stringify({ value: 'first' }));
  });

  it('the same with another fingerprint: the key was reused', async () => {
    const keys = [freshKey()];
    const results = await recordEach(
      database.pool,
      keys.map((k) => item(k)),
      NOW,
      noting(keys, () => ({ ok: false, error: invalidInput({ offer_ids: ['unknown'] }) }), () => commitRecordElsewhere(keys[0]!, { value: 'first' }, 'other-fp')),
    );
    expect(results[0]!.ok).toBe(false);
    expect((results[0] as { error: DomainError }).error.code).toBe('idempotency_key_reused');
  });

  it('a record there before the claim is answered, the item not admitted to the work', async () => {
    const keys = [freshKey(), freshKey()];
    await commitRecordElsewhere(keys[0]!, { value: 'first' });
    await commitRecordElsewhere(keys[1]!, { value: 'first' }, 'other-fp');
    let admitted: number[] | undefined;
    const results = await recordEach(database.pool, keys.map((k) => item(k)), NOW, async (_tx, claims) => {
      admitted = await claims.admit();
      return [];
    });
    expect(admitted).toEqual([]);
    expect(results[0]).toEqual({ ok: true, value: { ok: true, value: 'first', replayed: true } });
    expect((results[1] as { error: DomainError }).error.code).toBe('idempotency_key_reused');
  });
});

describe('recordEach: the claims in the work’s own statement', () => {
  it('a key held by a request still running is refused, a kept one replayed, the others admitted', async () => {
    const keys = [freshKey(), freshKey(), freshKey()];
    await commitRecordElsewhere(keys[1]!, { value: 'first' });
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [apiKeyId, keys[2]]);
      let admitted: number[] = [];
      const results = await recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims) => {
        const { rows } = await tx.query<ClaimRow>(
          statement(sql`WITH ${claimsWith(claims.values())} SELECT claim_ok, claim_fingerprint, claim_outcome, claim_admitted FROM claimed ORDER BY n`, 'each_claims'),
        );
        admitted = await claims.admit(rows);
        return admitted.map(() => ({ ok: true as const, value: 'placed' }));
      });
      expect(admitted).toEqual([0]);
      expect(results[0]).toEqual({ ok: true, value: { ok: true, value: 'placed', replayed: false, requestId: expect.any(String) } });
      expect(results[1]).toEqual({ ok: true, value: { ok: true, value: 'first', replayed: true } });
      expect((results[2] as { error: DomainError }).error.code).toBe('idempotency_in_progress');
      expect(JSON.parse((await recordOf(keys[0]!))!)).toEqual({ value: 'placed' });
      expect(await recordOf(keys[2]!)).toBeUndefined();
    } finally {
      await holder.end();
    }
  });

  it('a work that takes the records and does not send them, or takes them twice, fails the group and writes nothing', async () => {
    const keys = [freshKey()];
    const unsent = recordEach(database.pool, keys.map((k) => item(k)), NOW, async (tx, claims, records) => {
      const admitted = await claims.admit();
      const answered = admitted.map(() => ({ ok: true as const, value: 'placed' }));
      records.values(answered);
      await tx.query('INSERT INTO each_work (note) VALUES ($1)', [keys[0]]);
      return answered;
    });
    await expect(unsent).rejects.toThrow(/did not send them/);
    const twice = recordEach(database.pool, keys.map((k) => item(k)), NOW, async (_tx, claims, records) => {
      const answered = (await claims.admit()).map(() => ({ ok: true as const, value: 'placed' }));
      records.values(answered);
      records.values(answered);
      return answered;
    });
    await expect(twice).rejects.toThrow(/taken twice/);
    expect(await notes()).not.toContain(keys[0]);
    expect(await recordOf(keys[0]!)).toBeUndefined();
  });

  it('a work that never claims, or answers another number of outcomes, fails the group and writes nothing', async () => {
    const keys = [freshKey(), freshKey()];
    await expect(recordEach(database.pool, keys.map((k) => item(k)), NOW, async () => [])).rejects.toThrow(/did not claim/);
    const short = recordEach(database.pool, keys.map((k) => item(k)), NOW, async (_tx, claims) => {
      await claims.admit();
      return [{ ok: true as const, value: 'one of two' }];
    });
    await expect(short).rejects.toThrow(/another number of outcomes/);
    expect(await recordOf(keys[0]!)).toBeUndefined();
  });
});

/**
 * The test database's pool, with `onQuery` called before each statement any of its connections
 * sends (BEGIN and COMMIT too): to count a transaction's round trips, or to act between two.
 * `joined` says whether the statement went while one before it was still unanswered: then it
 * travels in the same round trip (the pool's connections pipeline).
 */
function watchedPool() {
  const watch: { onQuery?: ((text: string, joined: boolean) => Promise<void> | void) | undefined } = {};
  const patched = new WeakSet<pg.PoolClient>();
  const pool = Object.create(database.pool) as pg.Pool;
  pool.connect = (async () => {
    const client = await database.pool.connect();
    if (!patched.has(client)) {
      patched.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      let unanswered = 0;
      client.query = (async (...args: unknown[]) => {
        const q = args[0] as string | { name?: string; text: string };
        const joined = unanswered > 0;
        unanswered++;
        try {
          await watch.onQuery?.(typeof q === 'string' ? q : (q.name ?? q.text), joined);
          return await query(...args);
        } finally {
          unanswered--;
        }
      }) as typeof client.query;
    }
    return client;
  }) as typeof pool.connect;
  return { pool, watch };
}

describe('placements in a group', async () => {
  const { pool, watch } = watchedPool();
  // The file's time, as for every record written here: on the real clock the records at NOW
  // expired a day later, and from then on these tests placed orders instead of replaying them.
  const groups = placementGroups({ pool, clock: { now: () => NOW }, durations: durationsFrom(defaultConfig()) });
  const offer = (await publisherWithOutlet(database)).offers[0]!;
  const ws = await workspaceWithKeys(database.pool, { balanceCents: offer.price * 10 });
  const principal = { keyId: ws.spendKeyId, name: 'spend', prefix: 'p', canPlaceOrders: true, abilities: [], workspaceId: ws.workspaceId, publisherId: null };
  const input: PlaceOrdersInput = { offer_ids: [offer.id], target_url: 'https://buyer.example/' };
  const placeWith = (key: string, what = input) =>
    place(groups, principal, what, { once: { book: 'request', apiKeyId: ws.spendKeyId, key, fingerprint: 'fp', requestId: `req-${++n}` }, keeps });
  const orders = async () => (await database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId])).rows[0]!.n;

  it('two round trips a group: BEGIN with its settings and the claims with the lock; the write with the records and COMMIT', async () => {
    // Each round trip: the statements sent while the first of them was unanswered.
    const sent: string[][] = [];
    watch.onQuery = (q, joined) => void (joined ? sent.at(-1)!.push(q) : sent.push([q]));
    const kept = await Promise.all([placeWith(freshKey()), placeWith(freshKey()), placeWith(freshKey())]);
    watch.onQuery = undefined;
    expect(kept.map((k) => k.ok && !k.replayed)).toEqual([true, true, true]);
    // The first placement goes as a group of its own; the two others wait for it (one workspace
    // has one group at a time) and go as the next group.
    const begin = 'BEGIN; SET LOCAL lock_timeout = 250; SET LOCAL plan_cache_mode = force_generic_plan';
    const group = [
      [begin, 'orders_placement_lock_contexts'],
      ['orders_place', 'COMMIT'],
    ];
    // A statement is named by its label and the hash of its text (src/db/sql.ts): the labels say which.
    expect(sent.map((trip) => trip.map((q) => q.replace(/_[0-9a-f]{12}$/, '')))).toEqual([...group, ...group]);
  });

  /**
   * Commits a record for `key` while the group's first statement (the claims with the lock) waits
   * for the workspace's balance rows, held meanwhile by another transaction: the statement's
   * snapshot, taken before the record was committed, misses it, while the key's claim succeeds.
   */
  async function recordCommittedDuringTheClaim(key: string, outcome: unknown, place: () => Promise<unknown>) {
    const holder = new pg.Client({ connectionString: database.url });
    // Connected beforehand: between the statement's wait and the group's 250 ms lock timeout
    // there is only the record's INSERT and the holder's COMMIT.
    const writer = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await writer.connect();
    let meanwhile: Promise<void> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM ledger_accounts WHERE workspace_id = $1 FOR UPDATE', [ws.workspaceId]);
      watch.onQuery = (q) => {
        if (!q.startsWith('orders_placement_lock_contexts_')) return;
        watch.onQuery = undefined;
        meanwhile = (async () => {
          // Until the statement waits for the rows the holder has (asked outside the holder's
          // transaction, which would see the same view of the activity throughout).
          for (;;) {
            const { rows } = await database.pool.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%claimed AS MATERIALIZED%'`,
            );
            if (rows[0]!.n > 0) break;
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
          await writer.query(
            `INSERT INTO idempotency_records (api_key_id, key, fingerprint, outcome, created_at, expires_at) VALUES ($1, $2, 'fp', $3, $4, $5)`,
            [ws.spendKeyId, key, JSON.stringify(outcome), new Date(NOW - 1000), new Date(NOW - 1000 + RETENTION_MS)],
          );
          await holder.query('COMMIT');
        })();
      };
      const kept = await place();
      await meanwhile;
      return kept;
    } finally {
      watch.onQuery = undefined;
      await holder.end();
      await writer.end();
    }
  }

  it('a placement whose key holds a record the claim missed: the group rolls back and the placement, run alone, replays the record', async () => {
    const key = freshKey();
    const before = await orders();
    const kept = await recordCommittedDuringTheClaim(key, { value: [{ id: 1, note: 'the first answer' }] }, () => placeWith(key));
    expect(kept).toEqual({ ok: true, value: [{ id: 1, note: 'the first answer' }], replayed: true });
    expect(await orders()).toBe(before);
  });

  it('a group of replays locks no balance: answered while another transaction holds the workspace’s rows', async () => {
    const keys = [freshKey(), freshKey()];
    for (const key of keys) await commitRecordElsewhere(key, { value: `first ${key}` }, 'fp', ws.spendKeyId);
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM ledger_accounts WHERE workspace_id = $1 FOR UPDATE', [ws.workspaceId]);
      const sent: string[] = [];
      watch.onQuery = (q) => void sent.push(q);
      const kept = await Promise.all(keys.map((key) => placeWith(key)));
      watch.onQuery = undefined;
      expect(kept).toEqual(keys.map((key) => ({ ok: true, value: `first ${key}`, replayed: true })));
      // Answered by their groups, none of which waited out its lock timeout and ran again alone.
      expect(sent.filter((q) => q === 'ROLLBACK' || q.startsWith('once_'))).toEqual([]);
      expect(sent.filter((q) => q === 'COMMIT').length).toBeGreaterThan(0);
    } finally {
      watch.onQuery = undefined;
      await holder.end();
    }
  });

  it('a placement refused (not kept) whose key holds a record the claim missed is answered with the record', async () => {
    const key = freshKey();
    const kept = await recordCommittedDuringTheClaim(key, { value: 'the first answer' }, () => placeWith(key, { ...input, offer_ids: [999_999_999] }));
    expect(kept).toEqual({ ok: true, value: 'the first answer', replayed: true });
  });
});
