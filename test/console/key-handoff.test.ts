import { decodeHTML } from 'entities';
import { describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { consoleClient, signUpConfirmed } from './helpers.js';

// Handing a key to an agent (docs/console.md, "Keys"): the page that shows a new key once gives
// its budget and a ready-to-paste MCP client configuration that works as pasted, plus the
// /mcp/oauth URL for clients that sign in; the list shows each key's budget; a key's page has
// Roll and Revoke; API keys and API access each say how they differ, and link to each other.
// The harness's HOST is loopback (127.0.0.1:3000), so OAuth is on at that address.

const h = await setupApp({ SIGNUP: 'open', SIGNUPS_PER_ADDRESS_PER_HOUR: 100, RATE_LIMIT_PER_MINUTE: 1_000_000 });
const password = 'correct horse battery';

let n = 0;
async function signedUp() {
  n++;
  const c = consoleClient(h, `10.55.0.${n}`);
  const home = await signUpConfirmed(h, c, { name: `Handoff ${n}`, email: `handoff${n}@example.com`, password });
  return { c, home, keys: `${home}/settings/api-keys`, access: `${home}/settings/api-access` };
}

/** The text of a read-only field of the shown-once page, as the person copies it. */
const field = (body: string, id: string) => {
  const input = new RegExp(`<input id="${id}"[^>]*value="([^"]*)"`).exec(body)?.[1];
  const area = new RegExp(`<textarea id="${id}"[^>]*>([\\s\\S]*?)</textarea>`).exec(body)?.[1];
  const raw = input ?? area;
  return raw === undefined ? undefined : decodeHTML(raw);
};
const fact = (body: string, name: string) => new RegExp(`<dt>${name}</dt><dd>([^<]*)</dd>`).exec(body)?.[1];
const mcpHeaders = (key: string) => ({ authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' });

describe('A new key, shown once — happy', () => {
  it('a spending key: its budget, and an MCP configuration that works as pasted; the /mcp/oauth URL from the configured address', async () => {
    const a = await signedUp();
    const res = await a.c.post(a.keys, { name: 'Agent', can_place_orders: '1', needs_approval: '1', order_limit_usd: '200', daily_limit_usd: '500.005', monthly_limit_usd: '' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const key = field(res.body, 'new-key')!;
    expect(key).toMatch(/^mk_/);
    expect(fact(res.body, 'Can place orders')).toBe('Yes');
    expect(fact(res.body, 'Budget')).toBe('$200.00 per order, $500.01 a day');
    expect(fact(res.body, "Orders need a person's approval")).toBe('Yes');
    expect(fact(res.body, 'Expires')).toBe('Never');

    const config = JSON.parse(field(res.body, 'mcp-config')!) as { mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }> };
    const server = config.mcpServers.marketplace!;
    expect(server.type).toBe('http');
    expect(new URL(server.url).pathname).toBe('/mcp');
    expect(server.headers).toEqual({ Authorization: `Bearer ${key}` });
    // The curl line and the configuration name the same server.
    expect(field(res.body, 'curl-line')).toContain(`${server.url.replace(/\/mcp$/, '')}/api/v1/me`);
    // As pasted: the client's first call works with that URL's path and that header.
    const call = await h.app.inject({ method: 'POST', url: new URL(server.url).pathname, headers: mcpHeaders(key), payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-balance', arguments: {} } } });
    expect(call.statusCode, call.body).toBe(200);
    expect(call.body).toContain('place_orders');

    // The OAuth URL is OAuth's own address, never the request's host (its resource must match).
    const oauthHint = /<p id="mcp-oauth">([\s\S]*?)<\/p>/.exec(res.body)![1]!;
    expect(oauthHint).toContain('<code>http://127.0.0.1:3000/mcp/oauth</code>');
    // A loopback address: said, with the setting a hosted client needs.
    expect(oauthHint).toContain('That address reaches this machine only');
    expect(oauthHint).toContain('<code>PUBLIC_BASE_URL</code>');
    expect((await h.app.inject({ url: '/.well-known/oauth-protected-resource/mcp/oauth' })).json().resource).toBe('http://127.0.0.1:3000/mcp/oauth');
    // Its page: what it spent, Roll and Revoke.
    const page = /<a href="([^"]+)">The key's page<\/a>/.exec(res.body)![1]!;
    expect(page).toMatch(new RegExp(`^${a.keys}/\\d+$`));
    expect((await a.c.get(page)).statusCode).toBe(200);
  });

  it('a read-only key: "Cannot spend", no approval line, the configuration all the same', async () => {
    const a = await signedUp();
    const res = await a.c.post(a.keys, { name: 'Reader' });
    expect(res.statusCode, res.body).toBe(200);
    expect(fact(res.body, 'Can place orders')).toBe('No');
    expect(fact(res.body, 'Budget')).toBe('Cannot spend');
    expect(res.body).not.toContain("<dt>Orders need a person's approval</dt>");
    const key = field(res.body, 'new-key')!;
    expect(JSON.parse(field(res.body, 'mcp-config')!).mcpServers.marketplace.headers.Authorization).toBe(`Bearer ${key}`);
  });

  it('a rolled key: the old key\'s budget, read back from what was stored, and its own configuration', async () => {
    const a = await signedUp();
    const made = await a.c.post(a.keys, { name: 'Roller', can_place_orders: '1', monthly_limit_usd: '5000' });
    const old = field(made.body, 'new-key')!;
    const id = /settings\/api-keys\/(\d+)\/roll/.exec((await a.c.get(a.keys)).body)![1]!;
    const rolled = await a.c.post(`${a.keys}/${id}/roll`, { grace_hours: '0' });
    expect(rolled.statusCode, rolled.body).toBe(200);
    const key = field(rolled.body, 'new-key')!;
    expect(key).not.toBe(old);
    expect(fact(rolled.body, 'Budget')).toBe('$5,000.00 a month');
    expect(JSON.parse(field(rolled.body, 'mcp-config')!).mcpServers.marketplace.headers.Authorization).toBe(`Bearer ${key}`);
  });

  it('API access (the seller API) and a publisher\'s keys: no MCP configuration (the MCP server answers such keys 401)', async () => {
    const a = await signedUp();
    const access = await a.c.post(a.access, { name: 'Shop' });
    expect(access.statusCode, access.body).toBe(200);
    expect(fact(access.body, 'Budget')).toBe('Cannot spend');
    expect(access.body).not.toContain('id="mcp-config"');
    expect(field(access.body, 'curl-line')).toContain('/api/account/details');

    const pub = await createPublisher(h.database.pool, 'Handoff Press');
    const email = `publisher-${pub.id}@example.com`;
    const user = await createUser(h.database.pool, { email, name: 'Publisher', password });
    await addMember(h.database.pool, { publisherId: pub.id }, user.id, 'owner');
    const c = consoleClient(h, '10.55.1.1');
    expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
    const keys = `/app/p/${pub.id}/settings/api-keys`;
    const list = await c.get(keys);
    expect(list.body).toContain('Keys for the publisher API');
    expect(list.body).not.toContain('id="keys-split"');
    const made = await c.post(keys, { name: 'Desk' });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.body).not.toContain('id="mcp-config"');
    expect(field(made.body, 'curl-line')).toContain('/api/v1/publisher/me');
  });
});

describe('The keys list and a key\'s page — happy', () => {
  it('the list shows each key\'s budget', async () => {
    const a = await signedUp();
    await a.c.post(a.keys, { name: 'Capped', can_place_orders: '1', order_limit_usd: '200', daily_limit_usd: '500', monthly_limit_usd: '5000' });
    await a.c.post(a.keys, { name: 'Open', can_place_orders: '1' });
    await a.c.post(a.keys, { name: 'Reader' });
    const list = (await a.c.get(a.keys)).body;
    expect(list).toContain('<th scope="col">Budget</th>');
    const budgetOf = (name: string) => new RegExp(`>${name}</a></td><td><code>[^<]*</code></td><td>(?:Yes|No)</td><td>([^<]*)</td>`).exec(list)?.[1];
    expect(budgetOf('Capped')).toBe('$200.00 per order, $500.00 a day, $5,000.00 a month');
    expect(budgetOf('Open')).toBe('No limit');
    expect(budgetOf('Reader')).toBe('Cannot spend');
  });

  it('a key\'s page has Roll and Revoke, leading to their confirmation pages; not for someone who may not change it, nor once revoked', async () => {
    const a = await signedUp();
    await a.c.post(a.keys, { name: 'Spender', can_place_orders: '1' });
    const id = /settings\/api-keys\/(\d+)\/roll/.exec((await a.c.get(a.keys)).body)![1]!;
    const page = `${a.keys}/${id}`;
    const body = (await a.c.get(page)).body;
    expect(body).toContain(`<a class="button" href="${page}/roll">Roll</a>`);
    expect(body).toContain(`<a class="button" href="${page}/revoke">Revoke</a>`);
    expect((await a.c.get(`${page}/roll`)).body).toContain('Roll Spender');
    expect((await a.c.get(`${page}/revoke`)).statusCode).toBe(200);

    // A member may not change a spending key: no links, and the pages refuse.
    const workspaceId = Number(a.home.split('/').pop());
    const email = `member-${id}@example.com`;
    const user = await createUser(h.database.pool, { email, name: 'Member', password });
    await addMember(h.database.pool, { workspaceId }, user.id, 'member');
    const m = consoleClient(h, '10.55.2.1');
    expect((await m.post('/app/sign-in', { email, password })).statusCode).toBe(303);
    const seen = (await m.get(page)).body;
    expect(seen).not.toContain(`href="${page}/roll"`);
    expect(seen).not.toContain(`href="${page}/revoke"`);
    expect((await m.get(`${page}/revoke`)).statusCode).toBe(403);

    expect((await a.c.post(`${page}/revoke`, {})).statusCode).toBe(200);
    const revoked = (await a.c.get(page)).body;
    expect(revoked).not.toContain(`href="${page}/roll"`);
    expect(revoked).not.toContain(`href="${page}/revoke"`);
  });
});

describe('API keys and API access — each says how it differs from the other', () => {
  it('both pages say which API their keys are for, and link to the other', async () => {
    const a = await signedUp();
    const keys = (await a.c.get(a.keys)).body;
    const keysSplit = /<p class="hint" id="keys-split">([\s\S]*?)<\/p>/.exec(keys)![1]!;
    expect(keys).toContain('Keys for the buyer API (/api/v1) and the MCP server (/mcp): the ones to hand to an agent');
    expect(keysSplit).toContain('<strong>API keys or API access?</strong>');
    expect(keysSplit).toContain(`<a href="${a.access}">API access</a>: that page lists the read-only keys again for the seller API (/api/account, /api/items, /api/purchases`);
    const access = (await a.c.get(a.access)).body;
    const accessSplit = /<p class="hint" id="keys-split">([\s\S]*?)<\/p>/.exec(access)![1]!;
    expect(access).toContain('Read-only keys for the seller API (/api/account, /api/items, /api/purchases');
    expect(accessSplit).toContain('<strong>API access or API keys?</strong>');
    expect(accessSplit).toContain(`<a href="${a.keys}">API keys</a>: these are the read-only keys of this workspace`);
    expect(accessSplit).toContain('A key that can place orders never works on the seller API');
  });
});
