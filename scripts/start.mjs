import { buildIfNeeded } from './build-if-needed.mjs';

buildIfNeeded();
await import('../dist/src/server.js');
