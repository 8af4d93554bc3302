import { me } from './me.js';
import type { Scenario } from './types.js';
import { validation } from './validation.js';

export type { BenchContext, BenchRequest, Ceiling, Scenario } from './types.js';

/** Every scenario `npm run bench -- <name>` knows; add new ones here. */
export const scenarios: readonly Scenario[] = [me, validation];

export function findScenario(name: string): Scenario | undefined {
  return scenarios.find((s) => s.name === name);
}
