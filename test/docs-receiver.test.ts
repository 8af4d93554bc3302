import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { setupApp } from './helpers/app.js';
import { bearer } from './helpers/fixtures.js';
import { orderKit } from './helpers/orders.js';
import { freePort } from './helpers/pg-server.js';

// docs/events.md's receiver, run as written (its ```js block, saved as a file in the project so
// `standardwebhooks` resolves): with OUTBOUND_ALLOW_LOOPBACK, as the doc says, it receives a real
// endpoint's deliveries and prints one line per event, messages included.

const h = await setupApp({ OUTBOUND_ALLOW_LOOPBACK: true, EVENTS_POLL_INTERVAL_MS: 20 });
const { place, pub, setup } = orderKit(h);

const doc = readFileSync(join(projectRoot, 'docs/events.md'), 'utf8');
const receiverCode = /^## A receiver that verifies signatures\n[\s\S]*?^```js\n([\s\S]*?)^```$/m.exec(doc)?.[1];
const file = join(projectRoot, `.receiver-${process.pid}.mjs`);
let receiver: ChildProcess | undefined;
afterAll(() => {
  receiver?.kill();
  rmSync(file, { force: true });
});

describe('docs/events.md: the receiver', () => {
  it('verifies and prints each event of a local endpoint, the message with its author and text', { timeout: 60_000 }, async () => {
    expect(receiverCode).toBeDefined();
    writeFileSync(file, receiverCode!);
    const { ws, p } = await setup();
    const port = await freePort();
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: bearer(ws.readKey),
      payload: { url: `http://127.0.0.1:${port}/hook` },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.events).toBeNull(); // as the doc says: events left out
    receiver = spawn(process.execPath, [file], {
      cwd: projectRoot,
      env: { ...process.env, WEBHOOK_SECRET: created.json().data.secret, RECEIVER_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    receiver.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    receiver.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    await vi.waitFor(() => expect(out).toContain('listening'), { timeout: 20_000, interval: 50 });

    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/product' })).json().data[0];
    await vi.waitFor(() => expect(out).toContain('order.placed'), { timeout: 20_000, interval: 50 });
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(() => expect(out).toContain('order.accepted'), { timeout: 20_000, interval: 50 });
    await pub(p.publisherKey, `${order.id}/messages`, { body: 'Draft coming on Friday.' });
    await vi.waitFor(() => expect(out).toContain('order.message_received'), { timeout: 20_000, interval: 50 });
    expect(out.trimEnd().split('\n')).toEqual([
      `listening on http://127.0.0.1:${port}/hook`,
      `order.placed order ${order.id} awaiting_acceptance`,
      `order.accepted order ${order.id} writing`,
      `order.message_received order ${order.id}: publisher wrote "Draft coming on Friday."`,
    ]);
    expect(err).toBe('');
  });
});
