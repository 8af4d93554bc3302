import { hash, verify, type Algorithm } from '@node-rs/argon2';

// argon2id with OWASP's first recommended setting: 19 MiB of memory, 2 passes, 1 lane.
const ARGON2ID = 2 as Algorithm; // a const enum in the package's types: not readable at run time here
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** False for a wrong password and for a stored hash that cannot be read. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * The same work as checking a real password, for an email nobody has: an unknown address must
 * not answer faster than a known one with a wrong password.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword('not a password anybody has: only spends the time a real check does');
  await verifyPassword(await dummy, password);
  return false;
}
