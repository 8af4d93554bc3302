import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { ManualClock } from '../helpers/clock.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { exchange, grantedTokens, mcpCall, personIn, PUBLIC } from './helpers.js';

// Settings → Connected apps: the workspace's grants, and Revoke (docs/oauth.md). Two app instances
// on one database stand for two server processes; their clocks move together.
const clock = new ManualClock(Date.now());
const a = await setupApp({ PUBLIC_BASE_URL: PUBLIC }, { clock });
const b = await setupApp({ PUBLIC_BASE_URL: PUBLIC }, { database: a.database, clock });
const status = async (h: typeof a, token: string) => (await mcpCall(h, token, 'get-balance')).statusCode;

describe('Settings → Connected apps', () => {
  it('lists a grant with its client, scope and budget; Revoke asks first, then every process refuses its tokens within 5 s', async () => {
    const g = await grantedTokens(a, { fields: { can_place_orders: '1', daily_limit_usd: '250' } });
    const home = `/app/w/${g.workspaceId}/settings/connected-apps`;
    const list = await g.browser.get(home);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('Test Agent');
    expect(list.body).toContain(g.client.client_id);
    expect(list.body).toContain('read, spend');
    expect(list.body).toContain('$250.00 a day');
    expect((await g.browser.get(`/app/w/${g.workspaceId}/settings/api-keys`)).body).not.toContain('Test Agent');
    // The grant's row is no key: the key page, its revoke and roll pages do not find it.
    const { rows } = await a.database.pool.query('SELECT id FROM api_keys WHERE oauth_client_id = $1', [g.client.client_id]);
    for (const page of ['', '/revoke', '/roll']) {
      expect((await g.browser.get(`/app/w/${g.workspaceId}/settings/api-keys/${rows[0].id}${page}`)).statusCode, page).toBe(404);
    }

    expect(await status(a, g.tokens.access_token)).toBe(200);
    expect(await status(b, g.tokens.access_token)).toBe(200);
    const id = /settings\/connected-apps\/(\d+)\/revoke/.exec(list.body)![1]!;
    const confirm = await g.browser.get(`${home}/${id}/revoke`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toMatch(/<button type="submit" class="danger">Revoke<\/button>/);
    const revoked = await g.browser.post(`${home}/${id}/revoke`, {}, { from: `${home}/${id}/revoke` });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).toContain('Revoked Test Agent');
    expect(revoked.body).toContain('Revoked</td>');

    // The refresh token is gone at once; cached answers last at most 5 s on each process.
    const refresh = await exchange(a, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id });
    expect(refresh.json().error).toBe('invalid_grant');
    clock.advance(5_001);
    expect(await status(a, g.tokens.access_token)).toBe(401);
    expect(await status(b, g.tokens.access_token)).toBe(401);
  });

  it('a member cannot revoke a spending grant (404), another workspace cannot see it, a viewer has no Revoke', async () => {
    const g = await grantedTokens(a, { fields: { can_place_orders: '1' } });
    const member = await personIn(a, 'member', g.workspaceId);
    const home = `/app/w/${g.workspaceId}/settings/connected-apps`;
    const list = await member.browser.get(home);
    expect(list.body).toContain('Test Agent');
    expect(list.body).not.toMatch(/\/revoke"/);
    const { rows } = await a.database.pool.query('SELECT id FROM api_keys WHERE oauth_client_id = $1', [g.client.client_id]);
    expect((await member.browser.get(`${home}/${rows[0].id}/revoke`)).statusCode).toBe(404);
    const stranger = await personIn(a, 'owner');
    expect((await stranger.browser.get(`/app/w/${stranger.workspaceId}/settings/connected-apps/${rows[0].id}/revoke`)).statusCode).toBe(404);
    expect((await stranger.browser.get(`/app/w/${stranger.workspaceId}/settings/connected-apps`)).body).not.toContain(g.client.client_id);
    await addMember(a.database.pool, { workspaceId: g.workspaceId }, stranger.userId, 'viewer');
    expect(await status(a, g.tokens.access_token)).toBe(200);
  });
});

describe('a person removed from a workspace, or who leaves it, no longer reaches it through the apps they connected — security', () => {
  /** A workspace with an owner and a member, each of whom connected an app to it; the member also connected one elsewhere. */
  async function connected() {
    const owner = await grantedTokens(a, { scope: 'read' });
    const member = await personIn(a, 'member', owner.workspaceId);
    const mine = await grantedTokens(a, { scope: 'read', person: member });
    const elsewhere = await personIn(a, 'owner');
    await addMember(a.database.pool, { workspaceId: elsewhere.workspaceId }, member.userId, 'member');
    const other = await grantedTokens(a, { scope: 'read', person: { ...member, workspaceId: elsewhere.workspaceId } });
    return { owner, member, mine, other };
  }

  async function expectEnded(g: Awaited<ReturnType<typeof grantedTokens>>, kept: Awaited<ReturnType<typeof grantedTokens>>[]) {
    // The refresh token is gone at once; cached answers last at most 5 s on each process.
    const refresh = await exchange(a, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id });
    expect(refresh.json().error).toBe('invalid_grant');
    clock.advance(5_001);
    expect(await status(a, g.tokens.access_token)).toBe(401);
    expect(await status(b, g.tokens.access_token)).toBe(401);
    const { rows } = await a.database.pool.query('SELECT revoked_at FROM api_keys WHERE oauth_client_id = $1', [g.client.client_id]);
    expect(rows[0].revoked_at).not.toBeNull();
    for (const k of kept) expect(await status(a, k.tokens.access_token)).toBe(200);
  }

  it('removed by an owner: their grants for that workspace end within 5 s; the owner\'s, and theirs elsewhere, go on', async () => {
    const { owner, member, mine, other } = await connected();
    expect(await status(a, mine.tokens.access_token)).toBe(200);
    const remove = `/app/w/${owner.workspaceId}/settings/members/${member.userId}/remove`;
    const confirm = await owner.browser.get(remove);
    expect(confirm.body).toContain('Apps they connected to this workspace are disconnected');
    const removed = await owner.browser.post(remove, {}, { from: remove });
    expect(removed.statusCode).toBe(303);
    await expectEnded(mine, [owner, other]);
    const list = await owner.browser.get(`/app/w/${owner.workspaceId}/settings/connected-apps`);
    expect(list.body).toContain('Revoked</td>');
  });

  it('leaving: their grants for that workspace end within 5 s', async () => {
    const { owner, member, mine, other } = await connected();
    const leave = `/app/w/${owner.workspaceId}/settings/members/${member.userId}/remove`;
    const confirm = await member.browser.get(leave);
    expect(confirm.body).toContain('Apps you connected to this workspace are disconnected');
    const left = await member.browser.post(leave, {}, { from: leave });
    expect(left.statusCode).toBe(303);
    await expectEnded(mine, [owner, other]);
  });
});
