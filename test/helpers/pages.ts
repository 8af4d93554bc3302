import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export type Page = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Pages served on a loopback port: `pages` maps a path to what answers it (404 otherwise). Every
 * request is kept, in arrival order; `host` is where the tests reach it (a name mapped to
 * 127.0.0.1 by OUTBOUND_RESOLVE, or the address itself).
 */
export async function startPages(pages: Record<string, Page>) {
  const received: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    received.push(req);
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    if (page) page(req, res);
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port, received, url: (path = '/', host = '127.0.0.1') => `http://${host}:${port}${path}` };
}

/** An HTML reply. */
export const html =
  (body: string, headers: Record<string, string> = {}, status = 200): Page =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);

/** A redirect to `location`, as given (relative or absolute). */
export const redirect =
  (location: string, status = 302): Page =>
  (_req, res) =>
    res.writeHead(status, { location }).end();

/** A request that is never answered. */
export const hang: Page = () => {};
