import type { PasswordCost } from '../../src/domain/users/passwords.js';

/**
 * The lowest cost argon2id takes (8 KiB, 1 pass), for every password the tests hash: at OWASP's
 * (19 MiB, 2 passes, the configuration's default) a run's 600 hashes and 400 checks took about 8
 * CPU-seconds. `setup-file.ts` sets it before each file; `setupApp` builds its apps with it.
 */
export const TEST_PASSWORD_COST: PasswordCost = { memoryKiB: 8, passes: 1 };

export const testPasswordConfig = { PASSWORD_HASH_MEMORY_KIB: TEST_PASSWORD_COST.memoryKiB, PASSWORD_HASH_PASSES: TEST_PASSWORD_COST.passes };
