import { fileURLToPath } from 'node:url';
import { runWithAllocatorSetting } from './allocator.mjs';
import { buildIfNeeded } from './build-if-needed.mjs';

buildIfNeeded();
await runWithAllocatorSetting(fileURLToPath(new URL('../dist/src/server.js', import.meta.url)));
