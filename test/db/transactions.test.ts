import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitWith, withTransaction } from '../../src/db/handle.js';
import { pgErrorCode } from '../../src/db/errors.js';
import { createTestDatabase } from '../helpers/db.js';

// The pool's connections pipeline: BEGIN is sent with a transaction's first statement, and
// `commitWith` sends the last statements with COMMIT. One connection, so each test also checks
// that the connection comes back usable whatever happened to the transaction before.
const database = await createTestDatabase({ max: 1 });
afterAll(() => database.drop());

beforeAll(async () => {
  await database.pool.query('CREATE TABLE tx_notes (note text PRIMARY KEY)');
});

const notes = async () => (await database.pool.query<{ note: string }>('SELECT note FROM tx_notes ORDER BY note')).rows.map((r) => r.note);
const note = (text: string) => ({ text: 'INSERT INTO tx_notes (note) VALUES ($1)', values: [text] });
const txid = 'SELECT pg_current_xact_id_if_assigned()::text AS id, now()::text AS at';

describe('withTransaction with BEGIN sent alongside the first statement', () => {
  it('runs every statement in the one transaction, with its settings', async () => {
    const seen = await withTransaction(
      database.pool,
      async (tx) => {
        await tx.query(note('a1'));
        const first = (await tx.query<{ id: string; at: string }>(txid)).rows[0]!;
        await tx.query(note('a2'));
        const second = (await tx.query<{ id: string; at: string }>(txid)).rows[0]!;
        const timeout = (await tx.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]!.lock_timeout;
        return { first, second, timeout };
      },
      { lockTimeoutMs: 250 },
    );
    expect(seen.first.id).not.toBeNull();
    expect(seen.second).toEqual(seen.first);
    expect(seen.timeout).toBe('250ms');
    expect(await notes()).toEqual(expect.arrayContaining(['a1', 'a2']));
    // SET LOCAL: gone with the transaction.
    expect((await database.pool.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]!.lock_timeout).toBe('0');
  });

  it('a setting out of range is refused before a connection is taken (the only one stays free)', async () => {
    await expect(withTransaction(database.pool, async () => 'never', { lockTimeoutMs: 1.5 })).rejects.toThrow(/lockTimeoutMs/);
    expect(database.pool.totalCount - database.pool.idleCount).toBe(0);
    expect(await withTransaction(database.pool, async (tx) => (await tx.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n)).toBe(1);
  });

  it('rolls back everything when the function throws, even before its first statement', async () => {
    await expect(
      withTransaction(database.pool, async (tx) => {
        await tx.query(note('b1'));
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await expect(
      withTransaction(database.pool, async () => {
        throw new Error('before any');
      }),
    ).rejects.toThrow('before any');
    expect(await notes()).not.toContain('b1');
  });
});

describe('commitWith', () => {
  it('commits with the last statements and answers their results in order; nothing after it is needed', async () => {
    const results = await withTransaction(database.pool, async (tx) => {
      await tx.query(note('c1'));
      return commitWith(tx, [note('c2'), { text: 'SELECT count(*)::int AS n FROM tx_notes WHERE note LIKE $1', values: ['c%'] }]);
    });
    expect(results.map((r) => r.command)).toEqual(['INSERT', 'SELECT']);
    expect(results[1]!.rows[0]).toEqual({ n: 2 });
    expect(await notes()).toEqual(expect.arrayContaining(['c1', 'c2']));
    // The connection is out of the transaction: a statement now commits on its own.
    const { rows } = await database.pool.query<{ id: string | null }>(txid);
    expect(rows[0]!.id).toBeNull();
  });

  it('a statement that fails rolls back the whole transaction and its own error is thrown', async () => {
    await database.pool.query("INSERT INTO tx_notes (note) VALUES ('taken')");
    const failed = withTransaction(database.pool, async (tx) => {
      await tx.query(note('d1'));
      return commitWith(tx, [note('d2'), note('taken'), note('d3')]);
    });
    const error = await failed.catch((e: unknown) => e);
    // The unique violation, not the "transaction is aborted" of the statements after it.
    expect(pgErrorCode(error)).toBe('23505');
    const left = await notes();
    for (const n of ['d1', 'd2', 'd3']) expect(left).not.toContain(n);
    // And the connection works: the next transaction commits.
    await withTransaction(database.pool, (tx) => commitWith(tx, [note('d4')]));
    expect(await notes()).toContain('d4');
  });

  it('a statement the driver cannot send stops COMMIT: the statements before it are rolled back', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const failed = withTransaction(database.pool, (tx) =>
      commitWith(tx, [note('f1'), { text: 'INSERT INTO tx_notes (note) VALUES ($1::json::text)', values: [circular] }]),
    );
    await expect(failed).rejects.toThrow(/circular/i);
    expect(await notes()).not.toContain('f1');
    await withTransaction(database.pool, (tx) => commitWith(tx, [note('f2')]));
    expect(await notes()).toContain('f2');
  });

  it('a statement the driver reports on a later tick stops COMMIT too (a prepared name reused with other text, values not a list)', async () => {
    for (const [tag, bad] of [
      ['h1', { name: 'tx_test_named', text: 'SELECT 2 AS a' }],
      ['h2', { text: 'SELECT $1::text AS a', values: 'x' as unknown as unknown[] }],
    ] as const) {
      const failed = withTransaction(database.pool, async (tx) => {
        await tx.query({ name: 'tx_test_named', text: 'SELECT 1 AS a' });
        return commitWith(tx, [note(tag), bad]);
      });
      await expect(failed, tag).rejects.toThrow();
      expect(await notes(), tag).not.toContain(tag);
    }
  });

  it('a transaction that failed earlier, its error swallowed, is not reported committed', async () => {
    const failed = withTransaction(database.pool, async (tx) => {
      await tx.query(note('g1'));
      await tx.query('SELECT 1/0').catch(() => {});
      return commitWith(tx, []);
    });
    await expect(failed).rejects.toThrow(/rolled back instead of committed/);
    expect(await notes()).not.toContain('g1');
  });

  it('is refused outside a transaction, from a function that joined one, and twice', async () => {
    await expect(commitWith(database.pool, [note('e0')])).rejects.toThrow(/commitWith ends a transaction/);
    await expect(
      withTransaction(database.pool, async (tx) => {
        await tx.query(note('e1'));
        // A function that joined its caller's transaction may not end it.
        return withTransaction(tx, (joined) => commitWith(joined, [note('e2')]));
      }),
    ).rejects.toThrow(/commitWith ends a transaction/);
    expect(await notes()).not.toContain('e1');
    await expect(
      withTransaction(database.pool, async (tx) => {
        await commitWith(tx, [note('e3')]);
        return commitWith(tx, [note('e4')]);
      }),
    ).rejects.toThrow(/commitWith ends a transaction/);
    expect(await notes()).toContain('e3');
    expect(await notes()).not.toContain('e4');
  });
});
