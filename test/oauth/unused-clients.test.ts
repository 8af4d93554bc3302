import { expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { authorizeUrl, exchange, grantedTokens, personIn, pkcePair, PUBLIC, register } from './helpers.js';

// Dynamic registration is open to anyone, so a client nobody connects must not stay for ever: the
// deadline sweep (here every 50 ms) deletes clients registered OAUTH_UNUSED_CLIENT_HOURS ago that
// no person connected, and keeps every client someone did.
const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC, ORDER_SWEEP_INTERVAL_MS: 50, OAUTH_UNUSED_CLIENT_HOURS: 24 });

const records = async (clientId: string) =>
  (
    await h.database.pool.query<{ model: string }>(
      `SELECT model FROM oauth_records WHERE (model = 'Client' AND id = $1) OR (model = 'RegistrationAccessToken' AND payload->>'clientId' = $1) ORDER BY model`,
      [clientId],
    )
  ).rows.map((r) => r.model);
const sweeps = () => new Promise((r) => setTimeout(r, 300)); // several ticks of the sweep

async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the sweep did not get there within 5 s');
}

it('a registered client nobody connected is deleted once OAUTH_UNUSED_CLIENT_HOURS have passed; a connected one stays', async () => {
  const unused = await register(h);
  const connected = await grantedTokens(h, { scope: 'read' });
  expect(await records(unused.client_id)).toEqual(['Client', 'RegistrationAccessToken']);

  await sweeps();
  expect(await records(unused.client_id)).toEqual(['Client', 'RegistrationAccessToken']); // young: kept

  h.clock.advance(24 * 3_600_000 + 60_000);
  await until(async () => (await records(unused.client_id)).length === 0);

  // Gone for the server too: an authorization request names an unknown client.
  const { browser } = await personIn(h);
  const res = await browser.get(authorizeUrl({ clientId: unused.client_id, scope: 'read', challenge: pkcePair().challenge }));
  expect(res.statusCode).toBe(400);
  expect(res.body).toContain('invalid_client');

  // Someone connected the other: it stays, and its refresh token still works.
  expect(await records(connected.client.client_id)).toContain('Client');
  const refreshed = await exchange(h, { grant_type: 'refresh_token', refresh_token: connected.tokens.refresh_token!, client_id: connected.client.client_id });
  expect(refreshed.statusCode, refreshed.body).toBe(200);
});
