import { setPasswordCost } from '../../src/domain/users/passwords.js';
import { TEST_PASSWORD_COST } from './password-cost.js';

// Run by vitest before every test file (also with `isolate: false`, where the modules stay loaded):
// the cost of the passwords hashed outside an app (fixtures, domain tests) is one per process, and
// a file that built an app with another configuration changed it.
setPasswordCost(TEST_PASSWORD_COST);
