import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { grantedTokens, mcpCall, personIn, pkcePair, PUBLIC, register, startAuthorization } from './helpers.js';

// "Orders need a person's approval" on the consent page (docs/oauth.md): ticked by default for an
// app that asks to spend, stored on the grant's api_keys row, and seen by the app in get-balance.
const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });

const grantRow = async (clientId: string) =>
  (await h.database.pool.query('SELECT can_place_orders, needs_approval FROM api_keys WHERE oauth_client_id = $1', [clientId])).rows;
const balanceKey = async (token: string) => JSON.parse((await mcpCall(h, token, 'get-balance')).json().result.content[0].text).key;
const checkbox = (body: string) => /<input id="f-needs_approval"[^>]*>/.exec(body)?.[0];

describe('consent page: "Orders need a person\'s approval"', () => {
  it('is offered ticked to an owner when the app asks to spend, and absent without spend', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const page = await owner.browser.get(await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge }));
    expect(page.body).toContain(`<label for="f-needs_approval">Orders need a person's approval</label>`);
    expect(checkbox(page.body)).toMatch(/ checked>$/);
    const readOnly = await owner.browser.get(await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge }));
    expect(readOnly.body).not.toContain('f-needs_approval');
  });

  it('ticked (as the page sends it by default): stored true on the grant, and the app sees key.needs_approval', async () => {
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1', needs_approval: '1' } });
    expect(await grantRow(g.client.client_id)).toEqual([{ can_place_orders: true, needs_approval: true }]);
    expect(await balanceKey(g.tokens.access_token)).toMatchObject({ prefix: 'oauth', can_place_orders: true, needs_approval: true });
    // Connected apps says so.
    const list = await g.browser.get(`/app/w/${g.workspaceId}/settings/connected-apps`);
    expect(list.body).toContain('read, spend (each order waits for a person&#39;s approval)');
  });

  it('unticked: stored false, the app spends within its budget alone', async () => {
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1' } });
    expect(await grantRow(g.client.client_id)).toEqual([{ can_place_orders: true, needs_approval: false }]);
    expect(await balanceKey(g.tokens.access_token)).toMatchObject({ can_place_orders: true, needs_approval: false });
  });

  it('without "Can place orders", or for an app that did not ask to spend, it is not stored: there is nothing to wait for', async () => {
    const notSpending = await grantedTokens(h, { scope: 'read spend', fields: { needs_approval: '1' } });
    expect(await grantRow(notSpending.client.client_id)).toEqual([{ can_place_orders: false, needs_approval: false }]);
    const readOnly = await grantedTokens(h, { scope: 'read', fields: { can_place_orders: '1', needs_approval: '1' } });
    expect(await grantRow(readOnly.client.client_id)).toEqual([{ can_place_orders: false, needs_approval: false }]);
    expect(await balanceKey(readOnly.tokens.access_token)).toMatchObject({ can_place_orders: false, needs_approval: false });
  });

  it('sent twice: refused naming it, and nothing is granted (it is not read as unticked)', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const twice = await owner.browser.post(path, [
      ['decision', 'allow'],
      ['workspace_id', String(owner.workspaceId)],
      ['can_place_orders', '1'],
      ['needs_approval', '1'],
      ['needs_approval', ''],
    ]);
    expect(twice.statusCode).toBe(422);
    expect(twice.body).toContain(`<p class="error" id="f-needs_approval-error">Orders need a person's approval must be sent once, as text</p>`);
    expect(await grantRow(client.client_id)).toEqual([]);
  });
});
