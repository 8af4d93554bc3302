import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';

// server.json, this server's entry for the MCP Registry (docs/mcp.md, "List your deployment"):
// the registry's format and limits (schema 2025-12-11), the package's version, and the two
// endpoints the server serves, each where an operator's deployment answers it.

interface Remote {
  type: string;
  url: string;
  headers?: { name: string; value?: string; isRequired?: boolean; isSecret?: boolean; variables?: Record<string, { isSecret?: boolean }> }[];
}

const text = readFileSync(join(projectRoot, 'server.json'), 'utf8');
const packageJson = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };

describe('server.json', () => {
  it('parses, names the registry schema and the package version', () => {
    const server = JSON.parse(text) as Record<string, unknown>;
    expect(server.$schema).toMatch(/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/);
    expect(server.version).toBe(packageJson.version);
  });

  it('keeps the registry\'s limits: a reverse-DNS name with one slash, a description of at most 100 characters', () => {
    const server = JSON.parse(text) as { name: string; description: string; title?: string };
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.name.split('/')[0]!.split('.').length).toBeGreaterThanOrEqual(2);
    expect(server.description.length).toBeGreaterThan(0);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect((server.title ?? '').length).toBeLessThanOrEqual(100);
  });

  it('lists /mcp with the key header and /mcp/oauth, streamable HTTP over https on the namespace\'s domain', () => {
    const server = JSON.parse(text) as { name: string; remotes: Remote[] };
    const domain = server.name.split('/')[0]!.split('.').reverse().join('.');
    const urls = server.remotes.map((r) => new URL(r.url));
    expect(urls.map((u) => u.pathname)).toEqual(['/mcp', '/mcp/oauth']);
    for (const [i, remote] of server.remotes.entries()) {
      expect(remote.type).toBe('streamable-http');
      expect(urls[i]!.protocol).toBe('https:');
      expect(urls[i]!.hostname === domain || urls[i]!.hostname.endsWith(`.${domain}`), urls[i]!.hostname).toBe(true);
    }
    const [keyed, oauth] = server.remotes;
    expect(keyed!.headers).toHaveLength(1);
    expect(keyed!.headers![0]).toMatchObject({ name: 'Authorization', value: 'Bearer {api_key}', isRequired: true, isSecret: true });
    expect(keyed!.headers![0]!.variables?.api_key?.isSecret).toBe(true);
    // The OAuth endpoint takes no configured header: a client that sends one must use /mcp.
    expect(oauth!.headers).toBeUndefined();
  });
});
