import { describe, expect, it } from 'vitest';
import { describeDemo, seedDemoIfEmpty } from '../../../src/demo/seed.js';
import { setupApp } from '../../helpers/app.js';

// The demo seed makes the demo workspace a seller, and prints a curl line that validates one of its codes.

const h = await setupApp();

describe('demo catalog', () => {
  it('prints a ready-to-paste validation that succeeds, and every item kind is there', async () => {
    const keys = await seedDemoIfEmpty(h.database, 0.2);
    expect(keys?.purchaseCode).toMatch(/^[0-9a-f-]{36}$/);
    const text = describeDemo(keys!, 'http://127.0.0.1:3000');
    const line = text.split('\n').find((l) => l.includes('/api/purchases/validation'));
    const m = /curl -s http:\/\/127\.0\.0\.1:3000(\S+) -d (api_key=\S+) -d (purchase_code=\S+)$/.exec(line!.trim());
    expect(m).not.toBeNull();
    const res = await h.app.inject({
      method: 'POST',
      url: m![1]!,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${m![2]}&${m![3]}`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.purchase).toMatchObject({ purchase_code: keys!.purchaseCode, license_type: 'Regular', price: 19.99, downloaded: true });

    const items = (await h.app.inject({ method: 'GET', url: `/api/items/all?api_key=${keys!.readOnlyKey}` })).json().items;
    expect(items).toHaveLength(5);
    expect(items.map((i: { media: object }) => Object.keys(i.media).join(','))).toEqual([
      'thumbnail,preview_image,screenshots',
      'thumbnail,preview_image',
      'thumbnail,preview_image,preview_video,screenshots',
      'thumbnail,preview_audio',
      'thumbnail,preview_image',
    ]);
    const account = (await h.app.inject({ method: 'GET', url: `/api/account/details?api_key=${keys!.readOnlyKey}` })).json().data;
    expect(account).toMatchObject({ name: { full_name: 'Dana Demo' }, balance: 5000, currency: 'USD', profile: { heading: 'Pixel & Sound Studio' } });
    const { rows } = await h.database.pool.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE refunded_at IS NOT NULL)::int AS refunded,
         count(*) FILTER (WHERE supported_until < now())::int AS support_over, count(*) FILTER (WHERE supported_until IS NULL)::int AS unsupported
       FROM purchases WHERE workspace_id = $1`,
      [keys!.workspaceId],
    );
    expect(rows[0]).toEqual({ n: 6, refunded: 1, support_over: 1, unsupported: 1 });
  });
});
