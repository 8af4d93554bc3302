import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql, sqlLiteral, withTransaction } from '../../src/db/tx.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const awkward = ["plain", "it's", "back\\slash", "both ' and \\ and \\'", "unicode ✓ 🙂", '{"json":"with \\"quotes\\""}', "'; DROP TABLE orders; --", ''];

describe('SQL batches', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('quotes strings exactly as the driver does, and PostgreSQL reads them back unchanged', async () => {
    for (const s of awkward) expect(sqlLiteral(s)).toBe(pg.escapeLiteral(s));
    const { rows } = await db.pool.query(`SELECT ${awkward.map((s, i) => `${sqlLiteral(s)} AS v${i}`).join(', ')}`);
    expect(Object.values(rows[0])).toEqual(awkward);
  });

  it('writes numbers only when they are safe integers, and dates as ISO timestamps', () => {
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(null)).toBe('NULL');
    expect(() => sqlLiteral(1.5)).toThrow();
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(sqlLiteral(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe("'2026-01-02T03:04:05.000Z'");
  });

  it('writes integer arrays as array literals that PostgreSQL reads back', async () => {
    expect(sqlLiteral([1, 22, 333])).toBe("'{1,22,333}'");
    expect(sqlLiteral([])).toBe("'{}'");
    expect(() => sqlLiteral([1, 2.5])).toThrow();
    const { rows } = await db.pool.query(`SELECT ${sqlLiteral([7, 8])}::int[] AS a, cardinality(${sqlLiteral([])}::int[]) AS n`);
    expect(rows[0]).toEqual({ a: [7, 8], n: 0 });
  });

  it('runs prepared statements from the batches, prepared on the connection that runs them', async () => {
    const echo = { name: 'test_echo', types: ['int', 'text'], text: 'SELECT $1 + 1 AS n, $2 AS s' };
    for (let i = 0; i < 12; i++) {
      const out = await withTransaction(
        db.pool,
        async (tx, [first]) => {
          const { rows } = await tx.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'test_echo' AND from_sql`);
          return { ...first!.rows[0], prepared: rows[0].n };
        },
        { prepared: [echo], afterBegin: [executeSql(echo, [i, "it's"])], beforeCommit: () => [executeSql(echo, [0, 'x'])] },
      );
      expect(out).toEqual({ n: i + 1, s: "it's", prepared: 1 });
    }
  });

  it('rolls back the whole transaction when a statement sent with COMMIT fails', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS batch_probe (id int PRIMARY KEY)');
    await expect(
      withTransaction(db.pool, (tx) => tx.query('INSERT INTO batch_probe VALUES (1)'), {
        beforeCommit: () => ['INSERT INTO batch_probe VALUES (1)'],
      }),
    ).rejects.toMatchObject({ code: '23505' });
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM batch_probe');
    expect(rows[0].n).toBe(0);
  });
});
