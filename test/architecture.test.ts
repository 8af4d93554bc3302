import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { importCycles, importGraph } from './helpers/imports.js';

// docs/architecture.md, checked: every import of src/ goes down the layers, and no files import
// each other in a circle. A layer is a top-level folder or file of src/.

const mayImport: Record<string, string[]> = {
  'server.ts': ['app.ts', 'infra', 'demo', 'config.ts', 'logger.ts'],
  'app.ts': ['http', 'mcp', 'console', 'workers', 'domain', 'schemas', 'db', 'outbound', 'common', 'config.ts'],
  infra: ['db', 'domain', 'common', 'config.ts'],
  cli: ['demo', 'domain', 'schemas', 'db', 'common', 'config.ts', 'paths.ts', 'logger.ts'],
  http: ['mcp', 'domain', 'schemas', 'outbound', 'common'],
  workers: ['domain', 'outbound', 'common'],
  mcp: ['domain', 'schemas', 'common'],
  console: ['domain', 'schemas', 'common', 'config.ts', 'paths.ts'],
  demo: ['domain', 'db', 'common'],
  schemas: ['domain', 'common'],
  domain: ['db', 'outbound', 'common', 'config.ts'],
  outbound: ['common'],
  db: ['common', 'paths.ts'],
  common: [],
  'config.ts': [],
  'paths.ts': [],
  'logger.ts': [],
};

/**
 * Imports that break the layering, each with why it stands; any other fails the test. None stand
 * today: an adapter reaches the database only through one domain call.
 */
const knownExceptions: Record<string, string> = {};

const layerOf = (file: string) => file.split('/')[1]!;

/**
 * Inside src/domain/, each folder is an area of the business, and an area imports only the areas
 * listed for it (docs/architecture.md, "Domain areas"): never one that imports it back, directly
 * or around a circle. The files directly under src/domain/ (errors, clock, parties, text input…)
 * are shared leaves any area may import; they import no area.
 */
const areaMayImport: Record<string, string[]> = {
  accounts: ['keys', 'mail', 'oauth', 'users', 'workspaces'],
  approvals: ['events', 'idempotency', 'keys', 'money', 'orders', 'users'],
  billing: ['events', 'idempotency', 'keys', 'ledger', 'money', 'users', 'webhooks'],
  catalog: ['limits'],
  events: ['outlets'],
  fx: [],
  idempotency: [],
  keys: ['events', 'outlets'],
  ledger: ['keys', 'money'],
  limits: [],
  mail: [],
  money: [],
  notifications: ['events', 'mail', 'orders', 'users'],
  oauth: ['keys', 'users'],
  orders: ['events', 'idempotency', 'keys', 'ledger', 'money', 'outlets', 'placements', 'users', 'workspaces'],
  outlets: ['money'],
  placements: [],
  planning: ['keys', 'money', 'orders', 'outlets', 'workspaces'],
  publishers: ['keys', 'ledger', 'money'],
  sessions: [],
  services: ['billing', 'orders', 'outlets', 'webhooks', 'workspaces'],
  users: ['mail'],
  webhooks: ['events', 'idempotency', 'outlets'],
  workspaces: ['events', 'keys', 'ledger', 'money'],
};

/** The area of a file under src/domain/: its folder, or `shared` for the files directly under it. */
const areaOf = (file: string) => {
  const parts = file.split('/');
  return parts.length > 3 ? parts[2]! : 'shared';
};

describe('architecture', () => {
  const graph = importGraph(projectRoot);

  it('reads the import graph of src/', () => {
    // A reader that found nothing would pass every check below.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/server.ts')).toContain('src/app.ts');
    expect(graph.get('src/db/schema/orders.ts')).toContain('src/common/enums.ts');
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

  it('every folder of src/domain/ is an area with its rule', () => {
    const areas = new Set([...graph.keys()].filter((f) => f.startsWith('src/domain/')).map(areaOf));
    areas.delete('shared');
    expect([...areas].filter((a) => !(a in areaMayImport)).sort()).toEqual([]);
  });

  it('domain areas import only the areas listed for them, and shared leaves import no area', () => {
    const breaking: string[] = [];
    for (const [file, targets] of graph) {
      if (!file.startsWith('src/domain/')) continue;
      const from = areaOf(file);
      for (const target of targets) {
        if (!target.startsWith('src/domain/')) continue;
        const to = areaOf(target);
        if (to === from || to === 'shared' || areaMayImport[from]?.includes(to)) continue;
        breaking.push(`${file} -> ${target}`);
      }
    }
    expect(breaking).toEqual([]);
  });

  it('no two domain areas depend on each other, directly or around a circle', () => {
    const areaGraph = new Map(Object.entries(areaMayImport));
    expect(importCycles(areaGraph).map((areas) => areas.join(' ↔ '))).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    expect(importCycles(graph).map((files) => files.join(' ↔ '))).toEqual([]);
  });
});
