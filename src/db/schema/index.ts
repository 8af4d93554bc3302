export * from './fx.js';
export * from './workspaces.js';
export * from './publishers.js';
export * from './api-keys.js';
export * from './brand-kits.js';
export * from './projects.js';
export * from './ledger.js';
export * from './app-secrets.js';
