import { hash, verify, type Algorithm } from '@node-rs/argon2';

// argon2id, by default with OWASP's first recommended setting: 19 MiB of memory, 2 passes, 1 lane.
const ARGON2ID = 2 as Algorithm; // a const enum in the package's types: not readable at run time here

/** What a new hash costs: memory in KiB and passes (PASSWORD_HASH_MEMORY_KIB, PASSWORD_HASH_PASSES). */
export interface PasswordCost {
  memoryKiB: number;
  passes: number;
}

/** OWASP's first recommended setting for argon2id, the configuration's default. */
export const OWASP_PASSWORD_COST: PasswordCost = { memoryKiB: 19_456, passes: 2 };

let cost: PasswordCost = OWASP_PASSWORD_COST;

/**
 * The cost of the hashes this process makes from now on, set from its configuration when the app
 * is built and when the CLI runs. A stored hash names the cost it was made with (its PHC string),
 * so a password hashed at another cost still verifies. The tests set the lowest cost argon2id
 * takes: at OWASP's, their 600 hashes and 400 checks a run were about 8 CPU-seconds.
 */
export function setPasswordCost(next: PasswordCost): void {
  cost = next;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID, memoryCost: cost.memoryKiB, timeCost: cost.passes, parallelism: 1 });
}

/** False for a wrong password and for a stored hash that cannot be read. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: { cost: PasswordCost; hash: Promise<string> } | undefined;

/**
 * The same work as checking a real password, for an email nobody has: an unknown address must
 * not answer faster than a known one with a wrong password. Made again when the cost changes, so
 * it costs what a password hashed now costs.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  if (dummy?.cost !== cost) dummy = { cost, hash: hashPassword('not a password anybody has: only spends the time a real check does') };
  await verifyPassword(await dummy.hash, password);
  return false;
}
