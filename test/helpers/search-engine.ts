import { afterAll } from 'vitest';
import { SearchEngine } from '../../src/domain/outlets/search-engine.js';
import type { TestDatabase } from './db.js';

/**
 * A search engine over the file's database, started now, closed (and the database dropped) after
 * the file's tests. An error while keeping the index current fails the test that is running.
 */
export function engineOver(database: TestDatabase): SearchEngine {
  const engine = new SearchEngine(database.pool, (err) => {
    throw err;
  });
  engine.start();
  afterAll(async () => {
    await engine.close();
    await database.drop();
  });
  return engine;
}
