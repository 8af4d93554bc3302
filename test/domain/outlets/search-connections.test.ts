import { afterAll, describe, expect, it } from 'vitest';
import { generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { warmConnections } from '../../../src/domain/outlets/search-connections.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { createTestDatabase } from '../../helpers/db.js';

// Issue 56: the first searches after a start each waited for the pool to open a connection and
// for their statements to be parsed on it. Before the first index is used, every connection the
// pool may hold is opened and sends a search's statements.
const database = await createTestDatabase({ max: 4, connectTimeoutMs: 300 });
const pub = await createPublisher(database.pool, 'Connections publisher');
await upsertOutlets(database.pool, pub.id, generateOutlets(30, 3, { domainTag: runDomainTag(pub.id, 3) }), 0.2);
afterAll(() => database.drop());

/** The named statements a connection has parsed (pg keeps them per client). */
const parsed = (client: unknown) => Object.keys((client as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements);

describe('opening the connections ahead', () => {
  it("opens every connection of the pool, each with a search's statements parsed, and gives them all back", async () => {
    await warmConnections(database.pool);
    expect(database.pool.totalCount).toBe(4);
    expect(database.pool.idleCount).toBe(4);
    const clients = await Promise.all(Array.from({ length: 4 }, () => database.pool.connect()));
    try {
      for (const c of clients) expect(parsed(c)).toEqual(expect.arrayContaining(['search_terms_of_words', 'outlets_rows:any', 'outlets_rows:guest_post']));
    } finally {
      for (const c of clients) c.release();
    }
  });

  it('skips a connection the pool cannot give in time, and gives back those it had', async () => {
    const held = await Promise.all(Array.from({ length: 3 }, () => database.pool.connect()));
    try {
      await warmConnections(database.pool);
      expect(database.pool.idleCount).toBe(1);
      expect(database.pool.waitingCount).toBe(0);
    } finally {
      for (const c of held) c.release();
    }
    expect(database.pool.idleCount).toBe(4);
  });
});
