import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { importCycles, importGraph } from './helpers/imports.js';

// docs/architecture.md, checked: every import of src/ goes down the layers, and no files import
// each other in a circle. A layer is a top-level folder or file of src/.

const mayImport: Record<string, string[]> = {
  'server.ts': ['app.ts', 'infra', 'demo', 'config.ts', 'logger.ts'],
  'app.ts': ['http', 'mcp', 'domain', 'schemas', 'db', 'shared', 'config.ts'],
  infra: ['db', 'domain', 'shared', 'config.ts'],
  cli: ['demo', 'domain', 'schemas', 'db', 'shared', 'config.ts', 'paths.ts', 'logger.ts'],
  http: ['mcp', 'domain', 'schemas', 'shared'],
  mcp: ['domain', 'schemas', 'shared'],
  demo: ['domain', 'db', 'shared'],
  schemas: ['domain', 'shared'],
  domain: ['db', 'shared', 'config.ts'],
  db: ['shared', 'paths.ts'],
  shared: [],
  'config.ts': [],
  'paths.ts': [],
  'logger.ts': [],
};

/**
 * Imports that break the layering, each with why it stands; any other fails the test. An adapter
 * should reach the database only through the domain: these are the order path's transactions and
 * idempotency records, and the MCP route's secret lookup, which the adapters still hold.
 */
const knownExceptions: Record<string, string> = {
  'src/http/mcp.ts -> src/db/migrate.ts': 'the confirmation secret is read by the MCP route',
  'src/http/plugins/idempotency.ts -> src/db/tx.ts': 'idempotency records are written by the HTTP plugin',
  'src/http/plugins/idempotent-batch.ts -> src/db/tx.ts': 'order placement batches are run by the HTTP plugin',
  'src/http/plugins/idempotent-batch.ts -> src/db/group-commit.ts': 'order placement batches are run by the HTTP plugin',
  'src/http/v1/orders.ts -> src/db/group-commit.ts': 'the orders route sets up group commit',
  'src/http/v1/orders.ts -> src/db/errors.ts': 'the orders route classifies lock timeouts',
  'src/http/v1/publisher.ts -> src/db/tx.ts': 'publisher actions run in the idempotency plugin’s transaction',
  'src/mcp/confirmation.ts -> src/db/tx.ts': 'confirmation tokens are recorded by the MCP layer',
  'src/mcp/tools/orders.ts -> src/db/tx.ts': 'buyer actions are wrapped in a transaction by the tool',
  'src/mcp/tools/spending.ts -> src/db/tx.ts': 'spending tools open the transaction that records the token',
};

/** Cycles that stand for the same reason, as their files joined by ' ↔ '. */
const knownCycles = new Set(['src/domain/ledger/ledger-service.ts ↔ src/domain/ledger/movements.ts']);

const layerOf = (file: string) => file.split('/')[1]!;

describe('architecture', () => {
  const graph = importGraph(projectRoot);

  it('reads the import graph of src/', () => {
    // A reader that found nothing would pass every check below.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/server.ts')).toContain('src/app.ts');
    expect(graph.get('src/db/schema/orders.ts')).toContain('src/shared/enums.ts');
  });

  it('every top-level folder and file of src/ is a layer with its rule', () => {
    const layers = new Set([...graph.keys()].map(layerOf));
    expect([...layers].filter((l) => !(l in mayImport))).toEqual([]);
  });

  it('imports only go down the layers', () => {
    const breaking: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (to === from || mayImport[from]?.includes(to)) continue;
        const edge = `${file} -> ${target}`;
        if (!(edge in knownExceptions)) breaking.push(edge);
      }
    }
    expect(breaking).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    const cycles = importCycles(graph)
      .map((files) => files.join(' ↔ '))
      .filter((cycle) => !knownCycles.has(cycle));
    expect(cycles).toEqual([]);
  });
});
