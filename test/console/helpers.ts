import type { Harness } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';

/** Every secret the console clients of this process saw (session ids, CSRF secrets and tokens): the log test looks for each. */
export const seenSecrets = new Set<string>();

/** A cookie jar and form poster for the console through app.inject, as a browser without JavaScript. */
export function consoleClient(h: Harness, ip = '127.0.0.1') {
  const jar = new Map<string, string>();
  const remember = (setCookie: string | string[] | undefined) => {
    for (const line of ([] as string[]).concat(setCookie ?? [])) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
      else {
        jar.set(name, value);
        seenSecrets.add(decodeURIComponent(value));
      }
    }
  };
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const client = {
    jar,
    async get(url: string) {
      const res = await h.app.inject({ method: 'GET', url, headers: { cookie: cookieHeader() }, remoteAddress: ip });
      remember(res.headers['set-cookie']);
      return res;
    },
    /** The `_csrf` token of the page at `url` (a GET first, as a browser would). */
    async token(url: string) {
      const page = await client.get(url);
      const m = /name="_csrf" value="([^"]+)"/.exec(page.body);
      if (!m) throw new Error(`no _csrf on ${url}: ${page.statusCode}`);
      seenSecrets.add(m[1]!);
      return m[1]!;
    },
    /**
     * Posts a form; its token is read from `from` (or `url`) first, unless given (`token`: posts
     * sent at once). Fields given as pairs may repeat a name, as a tampered form can.
     */
    async post(url: string, fields: Record<string, string> | [string, string][], opts: { from?: string; csrf?: boolean; token?: string } = {}) {
      const body = new URLSearchParams(fields);
      if (opts.token !== undefined) body.set('_csrf', opts.token);
      else if (opts.csrf !== false) body.set('_csrf', await client.token(opts.from ?? url));
      const res = await h.app.inject({
        method: 'POST',
        url,
        headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: body.toString(),
        remoteAddress: ip,
      });
      remember(res.headers['set-cookie']);
      return res;
    },
  };
  return client;
}

export type ConsoleClient = ReturnType<typeof consoleClient>;

/**
 * Signs a person up through the form, then confirms the address with the link the sign-up queued
 * (read from the outbox, as the mail would bring it), in the same browser: the console as a new
 * person has it once they opened the mail. Answers the path of their workspace.
 */
export async function signUpConfirmed(h: Harness, c: ConsoleClient, fields: { name: string; email: string; password: string }, opts: { from?: string } = {}): Promise<string> {
  const res = await c.post('/app/sign-up', fields, opts);
  if (res.statusCode !== 303) throw new Error(`sign-up of ${fields.email} answered ${res.statusCode}`);
  const link = await outboxLink(h.database.pool, fields.email, 'verify_email');
  const token = new URLSearchParams(link.split('?')[1]).get('token')!;
  seenSecrets.add(token);
  const confirmed = await c.post('/app/verify-email', { token }, { from: link });
  if (confirmed.statusCode !== 303) throw new Error(`confirming ${fields.email} answered ${confirmed.statusCode}`);
  const home = await c.get('/app');
  return home.headers.location!;
}

/**
 * Joins through an invitation signed out, as an address with no confirmed account does: the
 * invitation's form answers "Check your email", then the link mailed to the address (read from
 * the outbox) sets the name and password. Answers the last response (303 into the target).
 */
export async function joinByMail(h: Harness, c: ConsoleClient, token: string, email: string, fields: { name: string; password: string }) {
  const asked = await c.post('/app/invitation/accept', { token }, { from: `/app/invitation?token=${token}` });
  if (asked.statusCode !== 200) return asked;
  const link = await outboxLink(h.database.pool, email, 'invitation_proof');
  const proof = new URLSearchParams(link.split('?')[1]).get('mail_token')!;
  seenSecrets.add(proof);
  return c.post('/app/invitation/finish', { token, mail_token: proof, ...fields }, { from: link });
}
