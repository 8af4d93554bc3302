import { afterAll, describe, expect, it } from 'vitest';
import { topUp, workspaceAccountIds } from '../../../src/domain/ledger/ledger-service.js';
import { MAX_BALANCE_CENTS } from '../../../src/domain/ledger/limits.js';
import { post as postMovements } from '../../../src/domain/ledger/ledger.js';
import { withTransaction } from '../../../src/db/handle.js';
import { createWorkspace } from '../../../src/domain/workspaces/workspace-service.js';
import { createTestDatabase } from '../../helpers/db.js';
import { expectLedgerInvariants } from '../../helpers/ledger-invariants.js';

const database = await createTestDatabase({ max: 20 });
afterAll(() => database.drop());

describe('ledger', () => {
  it('a top-up moves money from external to available in one balanced transaction', async () => {
    const ws = await createWorkspace(database.pool, { name: 'Ledger A' });
    const r = await topUp(database.pool, ws.id, 12_345);
    expect(r.balanceCents).toBe(12_345);
    const { rows } = await database.pool.query(
      `SELECT a.kind, e.amount, t.kind AS tkind FROM ledger_entries e
         JOIN ledger_accounts a ON a.id = e.account_id JOIN ledger_transactions t ON t.id = e.transaction_id
        WHERE t.workspace_id = $1 ORDER BY a.kind`,
      [ws.id],
    );
    expect(rows).toEqual([
      { kind: 'available', amount: 12_345, tkind: 'top_up' },
      { kind: 'external', amount: -12_345, tkind: 'top_up' },
    ]);
    await expectLedgerInvariants(database);
  });

  it('50 concurrent top-ups lose nothing', async () => {
    const ws = await createWorkspace(database.pool, { name: 'Ledger B' });
    await Promise.all(Array.from({ length: 50 }, (_, i) => topUp(database.pool, ws.id, 100 + i)));
    const { rows } = await database.pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [ws.id]);
    expect(rows[0].balance).toBe(50 * 100 + (49 * 50) / 2);
    await expectLedgerInvariants(database);
  });

  it('rejects a non-positive or fractional top-up', async () => {
    const ws = await createWorkspace(database.pool, { name: 'Ledger C' });
    for (const cents of [0, -5, 1.5, Number.NaN]) {
      await expect(topUp(database.pool, ws.id, cents)).rejects.toMatchObject({ code: 'invalid_input' });
    }
  });

  it('refuses an unbalanced movement and leaves nothing behind', async () => {
    const ws = await createWorkspace(database.pool, { name: 'Ledger D' });
    const acc = await workspaceAccountIds(database.pool, ws.id);
    await expect(
      withTransaction(database.pool, (tx) =>
        postMovements(tx, [{ kind: 'top_up', orderId: null, workspaceId: ws.id, postings: [{ accountId: acc.available, kind: 'available', amount: 10 }] }]),
      ),
    ).rejects.toThrow(/unbalanced/);
    await expectLedgerInvariants(database);
  });

  it('the CHECK constraint stops a balance going below zero, rolling back the whole movement', async () => {
    const ws = await createWorkspace(database.pool, { name: 'Ledger E', balanceCents: 100 });
    const acc = await workspaceAccountIds(database.pool, ws.id);
    await expect(
      withTransaction(database.pool, (tx) =>
        postMovements(tx, [
          {
            kind: 'top_up',
            orderId: null,
            workspaceId: ws.id,
            postings: [
              { accountId: acc.available, kind: 'available', amount: -101 },
              { accountId: acc.held, kind: 'held', amount: 101 },
            ],
          },
        ]),
      ),
    ).rejects.toThrow();
    const { rows } = await database.pool.query('SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind', [ws.id]);
    expect(rows).toEqual([
      { kind: 'available', balance: 100 },
      { kind: 'held', balance: 0 },
    ]);
    await expectLedgerInvariants(database);
  });

  // Last in the file: it leaves the external account near its bound.
  it('no balance leaves what a JSON number carries exactly (2^53 − 1 cents)', async () => {
    const external = async () =>
      Number((await database.pool.query(`SELECT balance FROM ledger_accounts WHERE kind = 'external'`)).rows[0].balance);
    const balance = async (id: number) =>
      (await database.pool.query(`SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`, [id])).rows[0].balance;
    const e0 = await external();
    const a = await createWorkspace(database.pool, { name: 'Ledger F' });
    const b = await createWorkspace(database.pool, { name: 'Ledger G' });
    await topUp(database.pool, a.id, MAX_BALANCE_CENTS + e0 - 5);
    expect(await external()).toBe(-MAX_BALANCE_CENTS + 5);

    // The service as a whole: the external account's CHECK refuses, named as the top-up's problem.
    await expect(topUp(database.pool, b.id, 10)).rejects.toMatchObject({
      code: 'invalid_input',
      details: { errors: { cents: [expect.stringMatching(/money held by the service beyond 9,007,199,254,740,991 cents/)] } },
    });
    expect(await balance(b.id)).toBe(0);
    // A workspace created with an opening balance the ledger cannot take is not created at all.
    await expect(createWorkspace(database.pool, { name: 'Ledger H', balanceCents: 10 })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await database.pool.query(`SELECT count(*)::int AS n FROM workspaces WHERE name = 'Ledger H'`)).rows[0].n).toBe(0);

    // One workspace: refused before anything is written.
    await expect(topUp(database.pool, a.id, -e0 + 6)).rejects.toMatchObject({
      code: 'invalid_input',
      details: { errors: { cents: [expect.stringMatching(/workspace's balance beyond/)] } },
    });
    expect(await balance(a.id)).toBe(MAX_BALANCE_CENTS + e0 - 5);
    await expect(
      database.pool.query(`UPDATE ledger_accounts SET balance = balance + $2 WHERE workspace_id = $1 AND kind = 'available'`, [a.id, -e0 + 6]),
    ).rejects.toMatchObject({ constraint: 'ledger_accounts_balance_exact' });
    await expectLedgerInvariants(database);
  });
});
