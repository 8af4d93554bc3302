import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { createTestDatabase } from '../../helpers/db.js';
import { engineOver } from '../../helpers/search-engine.js';

// A nightly traffic refresh rewrites every outlet from outside the service. The engine reads such
// a burst by loading the catalog afresh, once: the rest of the burst, notified while that load
// runs, is in it. A write committed after the burst is still read, and searches order by the new
// figures as PostgreSQL does.
const database = await createTestDatabase();
const COUNT = 12_000; // above the size below which the engine never reloads
const pub = await createPublisher(database.pool, 'Burst publisher');
await upsertOutlets(database.pool, pub.id, generateOutlets(COUNT, 5, { domainTag: runDomainTag(pub.id, 5) }), 0.2);
const engine = engineOver(database);

const topByTraffic = async (writer: pg.Client) =>
  (await writer.query<{ id: number }>('SELECT id FROM outlets WHERE min_price_any IS NOT NULL ORDER BY monthly_visits DESC, id DESC LIMIT 15')).rows.map((r) => r.id);

describe('a refresh of every outlet, written from outside the service', () => {
  it('is read by one fresh load, and a write after it is read too', async () => {
    await engine.catchUp();
    const loadsBefore = engine.loads;
    const writer = new pg.Client({ connectionString: database.url });
    await writer.connect();
    try {
      await writer.query('UPDATE outlets SET monthly_visits = (hashtext(domain) & 1048575) * 10');
      // One outlet written again just after: whether it lands before or after the load's mark,
      // the engine must hold its new figure.
      const { rows } = await writer.query<{ id: number }>(
        "UPDATE outlets SET monthly_visits = 2000000000 WHERE id = (SELECT min(id) FROM outlets WHERE min_price_any IS NOT NULL) RETURNING id",
      );
      await engine.catchUp();
      expect(engine.loads - loadsBefore).toBe(1);
      const expected = await topByTraffic(writer);
      expect(expected[0]).toBe(rows[0]!.id);
      const found = await engine.search({ filter: {}, sort: '-traffic', offset: 0, limit: 15 });
      expect(found.ids).toEqual(expected);
      expect(found.total).toBe(Number((await writer.query('SELECT count(*) FROM outlets WHERE min_price_any IS NOT NULL')).rows[0].count));
    } finally {
      await writer.end();
    }
  });
});
