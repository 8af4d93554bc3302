import { createServer } from 'node:http';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutboundClient } from '../../src/outbound/http-client.js';
import { PAGE_MAX_BYTES, PAGE_USER_AGENT } from '../../src/outbound/page-fetch.js';
import { hang, html, type Page, redirect, startPages } from '../helpers/pages.js';

const resolve = new Map([
  ['outlet.test', '127.0.0.1'],
  ['other.test', '127.0.0.1'],
  ['metadata.test', '169.254.169.254'],
  ['private.test', '10.0.0.1'],
]);
const MB = 1024 * 1024;

/**
 * A page that declares 5 MB, or declares nothing and never ends: written 64 KB at a time as the
 * client reads it, until the client goes away. Fetching the endless one at all proves the
 * fetcher did not try to read it whole.
 */
const bigPage =
  (declareLength: boolean): Page =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', ...(declareLength ? { 'content-length': String(5 * MB) } : {}) });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    const more = () => {
      while (!res.destroyed && (!declareLength || written < 5 * MB)) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  };

describe('page fetcher (loopback allowed, names mapped by OUTBOUND_RESOLVE)', async () => {
  const client = createOutboundClient({ allowLoopback: true, resolve });
  afterAll(() => client.close());
  const pages: Record<string, Page> = {};
  const site = await startPages(pages);
  const at = (path: string, host = 'outlet.test') => site.url(path, host);
  const get = (url: string, timeoutMs = 5000, maxBytes?: number) => client.get(url, { timeoutMs, ...(maxBytes ? { maxBytes } : {}) });

  it('reads a page by its mapped name: status, body, headers; says who it is', async () => {
    pages['/post'] = html('<p>Grüße</p>', { 'x-robots-tag': 'noarchive' });
    const r = await get(at('/post'));
    expect(r).toEqual({
      ok: true,
      status: 200,
      finalUrl: at('/post'),
      headers: expect.objectContaining({ 'x-robots-tag': 'noarchive' }),
      headersDistinct: expect.objectContaining({ 'x-robots-tag': ['noarchive'] }),
      body: '<p>Grüße</p>',
      redirects: [],
    });
    const req = site.received.at(-1)!;
    expect(req.headers.host).toBe(`outlet.test:${site.port}`);
    expect(req.headers['user-agent']).toBe(PAGE_USER_AGENT);
    expect(req.headers.accept).toMatch(/^text\/html/);
  });

  it('over https, a mapped name is still the TLS server name', async () => {
    const names: string[] = [];
    // No certificate: the handshake stops once the client has said which name it wants.
    const server = tls.createServer({ SNICallback: (name, done) => (names.push(name), done(new Error('no certificate'))) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    afterAll(() => new Promise((r) => server.close(r)));
    const r = await get(`https://outlet.test:${(server.address() as AddressInfo).port}/`);
    expect(r).toMatchObject({ ok: false, reason: 'network' });
    expect(names).toEqual(['outlet.test']);
  });

  it('answers any status: a 404 is a page, not a failure of the fetch', async () => {
    expect(await get(at('/missing'))).toMatchObject({ ok: true, status: 404, body: '<h1>Not found</h1>' });
  });

  it('follows redirects, relative and absolute, each a new request, and says where it went', async () => {
    pages['/old'] = redirect('/middle', 301);
    pages['/middle'] = redirect(at('/new', 'other.test'), 308);
    pages['/new'] = html('moved here');
    const r = await get(at('/old'));
    expect(r).toMatchObject({ ok: true, status: 200, body: 'moved here', finalUrl: at('/new', 'other.test'), redirects: [at('/middle'), at('/new', 'other.test')] });
    expect(site.received.at(-1)!.headers.host).toBe(`other.test:${site.port}`);
  });

  it('follows five redirects and refuses a sixth', async () => {
    for (let i = 0; i < 6; i++) pages[`/hop${i}`] = redirect(`/hop${i + 1}`);
    pages['/hop6'] = html('end');
    expect(await get(at('/hop1'))).toMatchObject({ ok: true, status: 200, redirects: [1, 2, 3, 4, 5].map((i) => at(`/hop${i + 1}`)) });
    const r = await get(at('/hop0'));
    expect(r).toMatchObject({ ok: false, reason: 'too_many_redirects', status: 302, finalUrl: at('/hop5') });
    if (!r.ok) expect(r.detail).toBe(`More than 5 redirects: ${at('/hop5')} redirects again, to ${at('/hop6')}.`);
  });

  it('refuses a redirect to anything but http or https', async () => {
    pages['/to-ftp'] = redirect('ftp://outlet.test/file');
    pages['/to-js'] = redirect('javascript:alert(1)');
    for (const [path, target] of [['/to-ftp', 'ftp://outlet.test/file'], ['/to-js', 'javascript:alert(1)']] as const) {
      const r = await get(at(path));
      expect(r, path).toMatchObject({ ok: false, reason: 'bad_redirect', status: 302, detail: `${at(path)} redirects (302) to ${target}, which is not an http or https URL.` });
    }
  });

  it('refuses a page larger than 2 MB without reading it all, declared or not', async () => {
    pages['/declared'] = bigPage(true);
    pages['/endless'] = bigPage(false);
    expect(await get(at('/declared'))).toMatchObject({ ok: false, reason: 'too_large', status: 200, detail: `The page at ${at('/declared')} is larger than 2 MB (it declares ${5 * MB} bytes).` });
    expect(await get(at('/endless'))).toMatchObject({ ok: false, reason: 'too_large', status: 200, detail: `The page at ${at('/endless')} is larger than 2 MB (stopped reading after 2 MB).` });
    // 5 MB that compresses to a few kilobytes is judged by what it decompresses to.
    pages['/bomb'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(5 * MB, ' ')));
    expect(await get(at('/bomb'))).toMatchObject({ ok: false, reason: 'too_large', detail: `The page at ${at('/bomb')} is larger than 2 MB (stopped reading after 2 MB).` });
    expect(PAGE_MAX_BYTES).toBe(2 * MB);
    pages['/small'] = html('x'.repeat(2000));
    expect(await get(at('/small'), 5000, 1000)).toMatchObject({ ok: false, reason: 'too_large', detail: expect.stringContaining('larger than 1000 bytes') });
  });

  it('gives up at one deadline: no answer, a body that never ends, a redirect to a page that hangs', async () => {
    pages['/hang'] = hang;
    pages['/trickle'] = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<p>never finished');
    };
    pages['/to-hang'] = redirect('/hang');
    for (const path of ['/hang', '/trickle', '/to-hang']) {
      const r = await get(at(path), 300);
      const last = path === '/to-hang' ? at('/hang') : at(path);
      const stage = path === '/trickle' ? 'the reply began but did not finish' : 'connected, but no reply began';
      expect(r, path).toMatchObject({ ok: false, reason: 'timeout', finalUrl: last, detail: `No complete answer from outlet.test:${site.port} within 300 ms (${last}): ${stage}.` });
    }
  });

  it('decodes as a browser does: a byte-order mark wins over the charset header; UTF-16 by its BOM alone', async () => {
    const bom8 = Buffer.from([0xef, 0xbb, 0xbf]);
    pages['/bom-over-header'] = (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1' }).end(Buffer.concat([bom8, Buffer.from('<a href="/x">café app</a>', 'utf8')]));
    pages['/utf16le'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.from('\ufeff<a href="/x">café app</a>', 'utf16le'));
    const be = Buffer.from('\ufeff<a href="/x">café app</a>', 'utf16le').swap16();
    pages['/utf16be'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(be);
    pages['/meta-label'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=latin1"><p>café</p>', 'latin1'));
    pages['/unknown-label'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=no-such-thing' }).end(Buffer.from('<p>café</p>', 'utf8'));
    for (const path of ['/bom-over-header', '/utf16le', '/utf16be']) expect(await get(at(path)), path).toMatchObject({ ok: true, body: '<a href="/x">café app</a>' });
    expect(await get(at('/meta-label'))).toMatchObject({ ok: true, body: '<meta http-equiv="Content-Type" content="text/html; charset=latin1"><p>café</p>' });
    expect(await get(at('/unknown-label'))).toMatchObject({ ok: true, body: '<p>café</p>' });
  });

  it('accepts deflate with or without its zlib header, as browsers do', async () => {
    const body = '<a href="/x">deflated</a>'.repeat(50);
    pages['/zlib'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }).end(deflateSync(body));
    pages['/raw-deflate'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }).end(deflateRawSync(body));
    pages['/raw-bomb'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }).end(deflateRawSync(Buffer.alloc(5 * MB, ' ')));
    expect(await get(at('/zlib'))).toMatchObject({ ok: true, body });
    expect(await get(at('/raw-deflate'))).toMatchObject({ ok: true, body });
    expect(await get(at('/raw-bomb'))).toMatchObject({ ok: false, reason: 'too_large' });
  });

  it('keeps repeated headers apart (each X-Robots-Tag is judged on its own)', async () => {
    pages['/two-robots'] = (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.setHeader('x-robots-tag', ['bingbot: noarchive', 'noindex']);
      res.end('<p>x</p>');
    };
    expect(await get(at('/two-robots'))).toMatchObject({ ok: true, headersDistinct: { 'x-robots-tag': ['bingbot: noarchive', 'noindex'] } });
  });

  it('reports a fast network failure when it happens, with its code, not as a timeout at the deadline', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    // A deadline far beyond the test's own timeout: only an early answer lets this test pass.
    const r = await get(`http://outlet.test:${port}/`, 10 * 60_000);
    expect(r).toMatchObject({ ok: false, reason: 'network' });
    if (r.ok) return;
    expect(r.detail).toMatch(new RegExp(`^Could not fetch http://outlet\\.test:${port}/: the connection was refused \\(ECONNREFUSED after \\d+ ms\\)\\.$`));
    expect(r.code).toBe('ECONNREFUSED');
    expect(r.elapsedMs).toBeLessThan(10 * 60_000);
  });

  it('decodes compressed bodies and declared charsets', async () => {
    pages['/gzip'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync('<a href="/x">zipped</a>'));
    pages['/latin1'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1' }).end(Buffer.from('<p>café</p>', 'latin1'));
    pages['/meta-charset'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.from('<meta charset="windows-1252"><p>Ærø</p>', 'latin1'));
    expect(await get(at('/gzip'))).toMatchObject({ ok: true, body: '<a href="/x">zipped</a>' });
    expect(await get(at('/latin1'))).toMatchObject({ ok: true, body: '<p>café</p>' });
    expect(await get(at('/meta-charset'))).toMatchObject({ ok: true, body: '<meta charset="windows-1252"><p>Ærø</p>' });
  });

  it('refuses URLs it will not fetch', async () => {
    expect(await get('not a url')).toMatchObject({ ok: false, reason: 'bad_url', detail: '"not a url" is not an absolute URL.' });
    expect(await get('ftp://outlet.test/x')).toMatchObject({ ok: false, reason: 'bad_url' });
    expect(await get(`http://user:pw@outlet.test:${site.port}/post`)).toMatchObject({ ok: false, reason: 'bad_url' });
  });

  it('reports a page cut short or undecodable as a network failure', async () => {
    pages['/cut'] = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100' });
      res.write('<p>only part', () => res.destroy());
    };
    pages['/bad-gzip'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end('not gzip at all');
    expect(await get(at('/bad-gzip'))).toMatchObject({ ok: false, reason: 'network', status: 200, detail: `The page at ${at('/bad-gzip')} is compressed (gzip) but could not be decompressed.` });
    expect(await get(at('/cut'))).toMatchObject({ ok: false, reason: 'network', status: 200, detail: `outlet.test:${site.port} closed the connection before the page was complete.` });
  });

  it('reports a closed port as a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await get(`http://outlet.test:${port}/`)).toMatchObject({ ok: false, reason: 'network', detail: expect.stringMatching(`^Could not fetch http://outlet.test:${port}/: the connection was refused \\(ECONNREFUSED after \\d+ ms\\)\\.$`) });
  });

  // The first hop must be allowed for a redirect to be followed at all, so loopback is allowed
  // here; the redirect then points at what the policy refuses whatever it allows.
  it('re-checks every hop: a redirect to the metadata address or a private one is refused', async () => {
    pages['/to-metadata'] = redirect('http://169.254.169.254/latest/meta-data/');
    pages['/to-metadata-name'] = redirect('http://metadata.test/latest/meta-data/');
    pages['/to-private'] = redirect(`http://private.test:${site.port}/`);
    const cases = [
      ['/to-metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254', '169.254.169.254'],
      ['/to-metadata-name', 'http://metadata.test/latest/meta-data/', 'metadata.test', '169.254.169.254'],
      ['/to-private', `http://private.test:${site.port}/`, `private.test:${site.port}`, '10.0.0.1'],
    ] as const;
    for (const [path, target, host, address] of cases) {
      const r = await get(at(path));
      expect(r, path).toEqual({
        ok: false,
        reason: 'refused',
        detail: `Refused to connect to ${host}: ${address} is a private, loopback, link-local or metadata address, which outbound requests may not reach.`,
        finalUrl: target,
        redirects: [target],
        elapsedMs: expect.any(Number),
      });
    }
  });
});

describe('page fetcher (loopback not allowed)', async () => {
  const strict = createOutboundClient({ allowLoopback: false, resolve });
  afterAll(() => strict.close());
  const site = await startPages({ '/': html('<p>private</p>') });
  const v6 = await new Promise<number | null>((done) => {
    const server = createServer((_req, res) => res.end('private'));
    server.once('error', () => done(null)); // no IPv6 on this machine: the refusal is still checked
    server.listen(0, '::1', () => {
      afterAll(() => new Promise((r) => server.close(r)));
      done((server.address() as AddressInfo).port);
    });
  });

  it('refuses loopback, metadata and names that resolve to them, and sends them nothing', async () => {
    const cases = [
      [site.url('/'), '127.0.0.1'],
      [`http://[::1]:${v6 ?? site.port}/`, '::1'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      [site.url('/', 'outlet.test'), '127.0.0.1'],
      [site.url('/', 'localhost'), null],
    ] as const;
    for (const [url, address] of cases) {
      const r = await strict.get(url, { timeoutMs: 5000 });
      expect(r, url).toMatchObject({ ok: false, reason: 'refused', finalUrl: url, redirects: [] });
      if (!r.ok) {
        expect(r.detail, url).toMatch(/^Refused to connect to .+: .+ is a private, loopback, link-local or metadata address, which outbound requests may not reach\.$/);
        if (address) expect(r.detail, url).toContain(`: ${address} is a private`);
      }
    }
    expect(site.received).toEqual([]);
  });
});
