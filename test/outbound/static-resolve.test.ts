import { afterAll, describe, expect, it } from 'vitest';
import { refuseTarget } from '../../src/outbound/address-policy.js';
import { createOutboundClient } from '../../src/outbound/http-client.js';
import { startReceiver } from '../helpers/receiver.js';

// OUTBOUND_RESOLVE answers a name without DNS; the address is still judged by the policy, for
// webhook deliveries as for page fetches (one set of agents).
describe('static names (OUTBOUND_RESOLVE)', async () => {
  const resolve = new Map([['hooks.test', '127.0.0.1']]);
  const hook = await startReceiver();
  const url = hook.url().replace('127.0.0.1', 'hooks.test');

  it('a webhook to a mapped name reaches its address, with the name as Host', async () => {
    const client = createOutboundClient({ allowLoopback: true, resolve });
    afterAll(() => client.close());
    expect(await client.post(url, '{}', {}, 5000)).toMatchObject({ status: 200, error: null });
    expect(hook.received.at(-1)!.headers.host).toBe(`hooks.test:${hook.port}`);
  });

  it('a mapped address the policy refuses is refused, and nothing is sent', async () => {
    const before = hook.received.length;
    const strict = createOutboundClient({ allowLoopback: false, resolve });
    afterAll(() => strict.close());
    expect(await strict.post(url, '{}', {}, 5000)).toMatchObject({ status: null, error: expect.stringMatching(/^refused: /) });
    expect(hook.received).toHaveLength(before);
  });

  it('endpoint creation judges the mapped address too', async () => {
    expect(await refuseTarget(url, { allowLoopback: true, resolve })).toBeNull();
    expect(await refuseTarget(url, { allowLoopback: false, resolve })).toMatch(/public addresses only/);
    expect(await refuseTarget('https://HOOKS.test./x', { allowLoopback: false, resolve })).toMatch(/public addresses only/);
  });
});
