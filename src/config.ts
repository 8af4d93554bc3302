import { availableParallelism } from 'node:os';
import { z } from 'zod';

// The only module that reads process.env. Parsed once at boot; a bad value stops the process
// with a message naming the variable instead of surfacing later as a strange runtime error.

const bool = z
  .enum(['1', '0', 'true', 'false', ''])
  .transform((v) => v === '1' || v === 'true');

const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.string().url().optional());

// Which proxies' X-Forwarded-For to believe for the client address (the per-IP limits read it):
// false (the default: the peer is the client), true (any peer), or a comma-separated list of
// addresses and CIDR ranges, also loopback, linklocal and uniquelocal (the private ranges), as
// Fastify's trustProxy takes them. No hop count: Fastify 5 takes one but then trusts no proxy at
// all (a count cannot tell a proxy from a client that writes the header itself).
const PROXY_ITEM = /^(?:loopback|linklocal|uniquelocal|\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?|[0-9a-fA-F.]*:[0-9a-fA-F:.]*(?:\/\d{1,3})?)$/;
const trustProxy = z
  .string()
  .trim()
  .transform((v): boolean | string => (v === 'false' ? false : v === 'true' ? true : v))
  .refine((v) => typeof v === 'boolean' || v.split(',').every((item) => PROXY_ITEM.test(item.trim())), {
    message: 'must be true, false, or a comma-separated list of addresses and CIDR ranges (loopback, linklocal, uniquelocal)',
  });

// OUTBOUND_RESOLVE: `host=ip,host=ip`, a static resolver as curl's --resolve, so an outlet's
// domain can be served by a local page in development and tests. The address is still judged
// by the outbound address policy when the connection is made.
const HOST_IP = /^([a-z0-9.-]+)=(\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9a-f:.]+\]?)$/i;
const staticResolve = z
  .string()
  .trim()
  .refine((v) => v === '' || v.split(',').every((pair) => HOST_IP.test(pair.trim())), {
    message: 'must be a comma-separated list of host=ip pairs',
  })
  .transform((v) => {
    const map = new Map<string, string>();
    for (const pair of v === '' ? [] : v.split(',')) {
      const [, host, ip] = HOST_IP.exec(pair.trim())!;
      map.set(host!.toLowerCase().replace(/\.$/, ''), ip!.replace(/^\[|\]$/g, ''));
    }
    return map;
  });

// SMTP_URL: smtp://user:password@host:port (STARTTLS when the server offers it) or smtps://…
// (TLS from the start). It holds a password: the message naming a bad value never repeats it.
const smtpUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .refine((v) => v === undefined || isSmtpUrl(v), { message: 'must be smtp://user:password@host:port or smtps://user:password@host:port' });

function isSmtpUrl(v: string): boolean {
  try {
    const url = new URL(v);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

// MAIL_FROM: `address@domain` or `Name <address@domain>`, as a From header takes it; no line
// breaks, which would let the value write headers of its own.
const MAILBOX = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;
const mailbox = z
  .string()
  .trim()
  .refine((v) => MAILBOX.test(v), { message: 'must be an address (no-reply@example.com) or a name and an address (Marketplace <no-reply@example.com>)' });

// BILLING_INSTRUCTIONS: what a workspace is told to do to pay a top-up (docs/billing.md), with
// {reference} and {amount} filled in; `\n` (backslash, n) starts a new line, since an environment
// variable is one line in most .env files.
const DEFAULT_BILLING_INSTRUCTIONS =
  'Pay {amount} by bank transfer to the account named in your contract, with the reference {reference} as the payment\'s description: the reference is how we find your transfer.\\nYour balance grows once we have received it, usually within two working days.';
const billingInstructions = z
  .string()
  .trim()
  .max(4000, 'must be at most 4,000 characters')
  .refine((v) => v.includes('{reference}'), { message: 'must contain {reference}, where the payment reference goes' });

export const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // The scheme lower-cased (URLs' schemes are case-insensitive): HTTPS://… must make the cookies
  // Secure and the issuer https as https://… does.
  PUBLIC_BASE_URL: optionalUrl.transform((v) => v?.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, (scheme) => scheme.toLowerCase())).optional(),
  TRUST_PROXY: trustProxy.default(false),
  DATABASE_URL: optionalUrl.optional(),
  // Twice the cores plus one (PostgreSQL's rule of thumb for active connections): measured on
  // 2 cores, a pool of 4–5 placed 10–25% more orders a second than one of 10, whose extra
  // backends only queued for the same cores and the same hot index pages.
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(() => 2 * availableParallelism() + 1),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  DATA_DIR: z.string().default('.data'),
  SEED_DEMO: bool.default(false),
  REDIS_URL: optionalUrl.optional(),
  REDIS_KEY_PREFIX: z.string().max(64).default('mkt:'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(120),
  UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(60),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MCP_CONFIRMATION_SECRET: z.string().min(32).optional(),
  // The key that encrypts secrets the service must read back (webhook signing secrets); unset, one
  // generated into app_secrets (docs/events.md).
  SECRETS_KEY: z.string().min(32).optional(),
  FEE_RATE: z.coerce.number().min(0).max(1).default(0.2),
  // Order deadlines (docs/orders.md): how long each state may last before the sweep acts.
  ORDER_RESPOND_HOURS: z.coerce.number().positive().default(72),
  ORDER_CONTENT_DAYS: z.coerce.number().positive().default(14),
  ORDER_DRAFT_REVIEW_DAYS: z.coerce.number().positive().default(7),
  ORDER_LIVE_REVIEW_DAYS: z.coerce.number().positive().default(7),
  ORDER_PUBLISH_AFTER_DRAFT_DAYS: z.coerce.number().positive().default(3),
  // How long an agent's request waits for a person's approval before the sweep expires it (docs/approvals.md).
  APPROVAL_REQUEST_HOURS: z.coerce.number().positive().max(24 * 365).default(72),
  ORDER_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  // A client registered by dynamic registration that no person connected within this many hours is
  // deleted by the deadline sweep (docs/oauth.md): registration is open to anyone.
  OAUTH_UNUSED_CLIENT_HOURS: z.coerce.number().positive().max(24 * 365).default(24),
  // Events and webhooks (docs/events.md).
  EVENTS_POLL_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(200),
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(30).max(3650).default(30),
  OUTBOUND_ALLOW_LOOPBACK: bool.default(false),
  OUTBOUND_RESOLVE: z.string().default('').pipe(staticResolve),
  LINK_GUARANTEE_DAYS: z.coerce.number().positive().max(3650).default(60),
  LINK_RESTORE_DAYS: z.coerce.number().positive().max(365).default(7),
  LINK_RECHECK_INTERVAL_MS: z.coerce.number().int().min(1000).max(365 * 86_400_000).default(86_400_000),
  LINK_CHECK_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(10_000),
  LINK_CHECK_POLL_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: z.coerce.number().positive().max(1000).default(2),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(10_000),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
  WEBHOOK_DISABLE_AFTER_HOURS: z.coerce.number().positive().max(24 * 365).default(72),
  // Mail (docs/mail.md): without SMTP_URL mails are written to the log instead of sent.
  SMTP_URL: smtpUrl.optional(),
  MAIL_FROM: mailbox.optional(),
  MAIL_POLL_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  MAIL_TIMEOUT_MS: z.coerce.number().int().min(50).max(300_000).default(30_000),
  MAIL_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  MAIL_GIVE_UP_HOURS: z.coerce.number().positive().max(24 * 30).default(24),
  // The hour (UTC, 0–23) at which each person's daily digest of notifications is written.
  NOTIFICATION_DIGEST_HOUR: z.coerce.number().int().min(0).max(23).default(7),
  // required: an unconfirmed address sees only "Check your email"; optional: the console, but no
  // invitation accepted and no spending key made until the address is confirmed.
  EMAIL_VERIFICATION: z.enum(['required', 'optional']).default('required'),
  // The console (docs/console.md): open sign-up, or only the CLI and invitations add people.
  SIGNUP: z.enum(['open', 'closed']).default('closed'),
  // Wrong passwords allowed in 15 minutes per account from one client address and per address
  // (beyond, that address is refused), and per account from all addresses (beyond, the account is
  // slowed: one attempt per wait, doubling up to SIGNIN_SLOWDOWN_MAX_SECONDS); sign-ups per address
  // in an hour. Refusals answer 429 with Retry-After.
  SIGNIN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(10),
  SIGNIN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(50),
  SIGNIN_SLOWDOWN_MAX_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  SIGNUPS_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(5),
  // What hashing a new password costs (argon2id, docs/people.md): memory in KiB and passes. The
  // default is OWASP's first recommended setting (19 MiB, 2 passes). A stored hash keeps the cost it
  // was made with, so a change leaves every password working. The tests set the lowest (8, 1).
  PASSWORD_HASH_MEMORY_KIB: z.coerce.number().int().min(8).max(4_194_304).default(19_456),
  PASSWORD_HASH_PASSES: z.coerce.number().int().min(1).max(100).default(2),
  // Invitations a workspace (or publisher account) may send in 24 hours: each one lets whoever
  // holds its link learn, by sending its form, whether the address has an account.
  INVITATIONS_PER_WORKSPACE_PER_DAY: z.coerce.number().int().min(1).max(1_000_000).default(20),
  // Adding funds (docs/billing.md): the smallest and largest top-up a workspace may request, in US
  // cents, and the payment instructions its request and invoice show.
  TOPUP_MIN_CENTS: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(1_000),
  TOPUP_MAX_CENTS: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(10_000_000),
  // The smallest payout a publisher may ask for, US cents (docs/billing.md): a bank transfer costs the operator a fee.
  PAYOUT_MIN_CENTS: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(5_000),
  BILLING_INSTRUCTIONS: billingInstructions.default(DEFAULT_BILLING_INSTRUCTIONS),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  // Every this many ms, one log line with how long the event loop was held up (0: none).
  EVENT_LOOP_DELAY_LOG_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .refine((v) => v === 0 || v >= 100, { message: 'must be 0 (off) or at least 100' })
    .default(0),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  // Set by npm: the folder `npm run` was started from (npm itself runs scripts from the package
  // root). The admin CLI reads relative --file paths from there.
  INIT_CWD: z.string().optional(),
  // HTTP server timeouts against slow or hostile clients (docs/http.md, "Slow clients").
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(72_000),
  HTTP_CONNECTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
}).refine((c) => c.TOPUP_MIN_CENTS <= c.TOPUP_MAX_CENTS, { message: 'must be at least TOPUP_MIN_CENTS', path: ['TOPUP_MAX_CENTS'] });

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty value (`PORT=` copied from .env.example) means "use the default", not "invalid".
  const given: Record<string, string | undefined> = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  // PUBLIC_URL is another name for PUBLIC_BASE_URL (the OAuth docs and MCP clients' guides say
  // PUBLIC_URL); two different values would leave the issuer and the links disagreeing.
  if (given.PUBLIC_URL !== undefined) {
    if (given.PUBLIC_BASE_URL !== undefined && given.PUBLIC_BASE_URL.trim() !== given.PUBLIC_URL.trim()) {
      throw new Error('Invalid configuration:\n  PUBLIC_URL: is another name for PUBLIC_BASE_URL; set one of them, or both to the same URL');
    }
    given.PUBLIC_BASE_URL = given.PUBLIC_URL;
  }
  const parsed = configSchema.safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Defaults for tests and tools that build the app without an environment. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...configSchema.parse({}), ...overrides };
}

/**
 * The console's absolute address, for links a person opens from elsewhere (an approval request's
 * `approve_url`): PUBLIC_BASE_URL, else the address the server listens on (a wildcard address
 * named as localhost). Never taken from a request's Host header.
 */
export function consoleBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' || config.HOST === '' ? 'localhost' : config.HOST;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.PORT}`;
}

/**
 * The From of every mail: MAIL_FROM, else no-reply at the console's host name (localhost when the
 * console is reached by an IP address, which an address cannot name without brackets).
 */
/** Whether a HOST is a loopback address (127.0.0.0/8, ::1, localhost): only this machine reaches it. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(h);
}

/**
 * Where OAuth for agents lives (docs/oauth.md), or why it is off. PUBLIC_BASE_URL when set; else,
 * on a loopback HOST, the address the server listens on (`http://HOST:PORT`): only this machine
 * reaches it, so no public URL is needed. Anywhere else the URL people reach cannot be told from
 * the configuration, and it is never taken from a request's Host header, so OAuth stays off.
 */
export function oauthBase(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): { url: string } | { off: string } {
  if (config.PUBLIC_BASE_URL) return { url: config.PUBLIC_BASE_URL.replace(/\/+$/, '') };
  if (!isLoopbackHost(config.HOST)) return { off: `HOST ${config.HOST} is not a loopback address` };
  // PORT=0 lets the system choose the port once listening, after the app (and its issuer) is built.
  if (config.PORT === 0) return { off: 'PORT is 0, so the address is known only once listening' };
  return { url: consoleBaseUrl(config) };
}

export function mailFrom(config: Pick<Config, 'MAIL_FROM' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string {
  if (config.MAIL_FROM) return config.MAIL_FROM;
  const host = new URL(consoleBaseUrl(config)).hostname;
  const named = /[a-z]/i.test(host) && !host.includes(':') && !host.startsWith('[');
  return `Marketplace <no-reply@${named ? host : 'localhost'}>`;
}
