import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** A mail as the test SMTP server received it: parsed, with the envelope's recipients and the login used. */
export interface ReceivedMail {
  parsed: ParsedMail;
  rcptTo: string[];
  user: string | undefined;
}

export interface TestSmtp {
  port: number;
  /** SMTP_URL for the app: a user and password, which the server records and the logs must never show. */
  url: string;
  password: string;
  received: ReceivedMail[];
  /** Every login the server saw, with its password. */
  logins: Array<{ username: string; password: string }>;
  /** The mails received so far to `address` (any case). */
  to(address: string): ReceivedMail[];
  /** Waits (briefly, polling) until `count` mails have arrived in all. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Closes the listener: the app's connections are refused, as with a server that is away. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

/**
 * A real SMTP server in the test process (smtp-server), on 127.0.0.1 and a free port: plain SMTP
 * (no STARTTLS), any login accepted and recorded. Every mail is parsed with mailparser. Recipients
 * listed in `reject` are refused with 550, as a server refuses an unknown mailbox.
 */
export async function startSmtp(opts: { reject?: string[] } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const logins: TestSmtp['logins'] = [];
  const reject = new Set((opts.reject ?? []).map((a) => a.toLowerCase()));
  const options: SMTPServerOptions = {
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 100,
    onAuth(auth, _session, cb) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      cb(null, { user: auth.username });
    },
    onRcptTo(address, _session, cb) {
      if (reject.has(address.address.toLowerCase())) {
        const err = Object.assign(new Error('No such mailbox here'), { responseCode: 550 });
        return cb(err);
      }
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({ parsed, rcptTo: session.envelope.rcptTo.map((r) => r.address), user: session.user as string | undefined });
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  };
  let server = new SMTPServer(options);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.server.address() as AddressInfo).port);
      });
    });
  const port = await listen(0);
  const password = 'smtp-Pa55word-never-logged';
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  let open = true;
  return {
    port,
    url: `smtp://mailer:${password}@127.0.0.1:${port}`,
    password,
    received,
    logins,
    to: (address) => received.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === address.toLowerCase())),
    async waitFor(count, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} mails, received ${received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    async stop() {
      if (!open) return;
      open = false;
      await close();
    },
    async restart() {
      if (open) return;
      server = new SMTPServer(options);
      await listen(port);
      open = true;
    },
  };
}

/** The console link of `path` (verify-email, reset-password, invitation) in a mail's text part. */
export function linkIn(text: string | undefined, path: string): string {
  const m = new RegExp(`https?://[^\\s]+/app/${path}\\?token=[A-Za-z0-9_%-]+(?:&mail_token=[A-Za-z0-9_.%-]+)?`).exec(text ?? '');
  if (!m) throw new Error(`no /app/${path} link in: ${text}`);
  return m[0];
}

/** A link as the console client requests it: its path and query. */
export const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};
