import { createHmac, timingSafeEqual } from 'node:crypto';
import { readAppSecret } from '../../db/app-secrets.js';
import type { Db } from '../../db/handle.js';
import { UNSUBSCRIBE_SECRET_NAME } from '../../db/migrate.js';
import { type NotificationKind, type TargetKind, isNotificationKind } from './kinds.js';

// The one-click unsubscribe link of a notification (RFC 8058) works without signing in, so the
// link itself says whose setting it changes, and is signed: `<user>.<w12|p3|all>.<kind>.<HMAC>`.
// Nothing is stored per link. The HMAC key is generated into app_secrets at migration, shared by
// every process; the signature is compared in constant time. A link only ever turns one kind off
// for one person, so it never expires: a mail read months later still unsubscribes.

/** What a link unsubscribes from: one kind in one membership, or (`digest`) every kind a person set to the daily digest. */
export type Unsubscribe =
  | { userId: number; target: { kind: TargetKind; id: number }; kind: NotificationKind }
  | { userId: number; target: null; kind: 'digest' };

const TOKEN = /^([1-9]\d{0,9})\.(?:(w|p)([1-9]\d{0,9})|all)\.([a-z_]{1,40})\.([A-Za-z0-9_-]{43})$/;

/** The signing key; every process reads the same one. */
export async function unsubscribeSecret(db: Db): Promise<string> {
  const secret = await readAppSecret(db, UNSUBSCRIBE_SECRET_NAME);
  if (!secret) throw new Error(`No ${UNSUBSCRIBE_SECRET_NAME} in app_secrets: run the migrations (npm start does).`);
  return secret;
}

const payloadOf = (u: Unsubscribe) => `${u.userId}.${u.target ? `${u.target.kind === 'workspace' ? 'w' : 'p'}${u.target.id}` : 'all'}.${u.kind}`;
const sign = (secret: string, payload: string) => createHmac('sha256', secret).update(`unsubscribe:${payload}`).digest('base64url');

export function unsubscribeToken(secret: string, u: Unsubscribe): string {
  const payload = payloadOf(u);
  return `${payload}.${sign(secret, payload)}`;
}

/** What a token says, when it is one this service signed; null for anything else. */
export function readUnsubscribeToken(secret: string, token: string): Unsubscribe | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const [, user, side, id, kind, signature] = m;
  const userId = Number(user);
  if (userId > 2_147_483_647 || (id !== undefined && Number(id) > 2_147_483_647)) return null;
  let u: Unsubscribe;
  if (side === undefined) {
    if (kind !== 'digest') return null;
    u = { userId, target: null, kind: 'digest' };
  } else {
    if (!isNotificationKind(kind!)) return null;
    u = { userId, target: { kind: side === 'w' ? 'workspace' : 'publisher', id: Number(id) }, kind };
  }
  const expected = Buffer.from(sign(secret, payloadOf(u)));
  const given = Buffer.from(signature!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? u : null;
}

/** The link: absolute, to the console's page that asks (GET) and acts (POST). */
export const unsubscribeUrl = (baseUrl: string, token: string) => `${baseUrl}/app/unsubscribe?token=${token}`;
