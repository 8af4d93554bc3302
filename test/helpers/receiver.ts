import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { ManualClock } from './clock.js';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver on a loopback port. `answer` decides each reply (a status, or 'hang' to never
 * answer); every request is kept, in arrival order.
 */
export async function startReceiver(answer: (r: Received, n: number) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      const reply = answer(r, received.length);
      if (reply === 'hang') return;
      res.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    /** What arrived for one event id (the webhook-id header). */
    of: (webhookId: string) => received.filter((r) => r.headers['webhook-id'] === webhookId),
  };
}

/** The wall clock, movable forward: deliveries are timed by it, and a test can skip days. */
export class LiveClock extends ManualClock {
  private offset = 0;
  override now(): number {
    return Date.now() + this.offset;
  }
  override advance(ms: number): void {
    this.offset += ms;
  }
  override set(ms: number): void {
    this.offset = ms - Date.now();
  }
}
