import { Webhook } from 'standardwebhooks';
import { withTransaction, type Db } from '../../db/handle.js';
import type { OutboundClient, OutboundResult } from '../../outbound/http-client.js';
import { recordEvents } from '../events/record.js';
import { eventId, type EventOwner } from '../events/event-types.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { type EndpointRow, endpointView } from './endpoints.js';
import { resealSecret, type SecretBox } from './secret-box.js';

export interface DeliverySettings {
  timeoutMs: number;
  retryBaseMs: number;
  disableAfterMs: number;
}

/** Deliveries attempted at once by one process. */
const BATCH = 50;
/** A claimed attempt lapses this long after its timeout, if its process never recorded the outcome (it died). */
const CLAIM_MARGIN_MS = 5_000;
/** The longest wait between two attempts, however many failed. */
const MAX_RETRY_MS = 12 * 3_600_000;

interface Claimed {
  id: number;
  attempts: number;
  first_attempt_at: Date;
  endpoint_id: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  position: number;
  type: string;
  actor: string;
  previous_status: string | null;
  data: unknown;
  created_at: Date;
}

/** The request body: the Standard Webhooks payload (type, timestamp, data), which is also the feed's event. */
export function webhookBody(e: Pick<Claimed, 'position' | 'type' | 'created_at' | 'actor' | 'previous_status' | 'data'>): string {
  const at = isoSeconds(e.created_at);
  return JSON.stringify({
    id: eventId(e.position),
    type: e.type,
    timestamp: at,
    created_at: at,
    actor: e.actor,
    previous_status: e.previous_status,
    data: e.data,
  });
}

/** The Standard Webhooks headers; during a rotation, signed with both secrets (space-separated). */
export function signedHeaders(msgId: string, body: string, secrets: string[], at: Date): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(msgId, at, body)).join(' '),
  };
}

/** The wait before the next attempt: the base, doubling with each failure, plus up to a fifth more at random. */
export function retryDelay(attempts: number, baseMs: number): number {
  const exact = Math.min(baseMs * 2 ** Math.min(attempts - 1, 40), MAX_RETRY_MS);
  return Math.round(exact * (1 + Math.random() * 0.2));
}

/**
 * Claims due deliveries and marks the attempt in one committed statement before sending: another
 * process skips them (SKIP LOCKED while claiming, then next_attempt_at is past the attempt's
 * timeout), and if this process dies mid-send the claim lapses and the delivery is sent again
 * (at least once). Then sends each and records the outcome. Returns how many it attempted.
 */
export async function deliverDue(pool: Db, client: OutboundClient, settings: DeliverySettings, now: () => number, box: SecretBox): Promise<number> {
  const claimedAt = now();
  const { rows } = await pool.query<Claimed>({
    name: 'webhook_deliveries_claim',
    text: `WITH due AS (
             SELECT d.id FROM webhook_deliveries d
              WHERE d.status = 'pending' AND d.next_attempt_at <= $1
              ORDER BY d.next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
           )
           UPDATE webhook_deliveries d
              SET attempts = d.attempts + 1, next_attempt_at = $2, last_attempt_at = $1,
                  first_attempt_at = COALESCE(d.first_attempt_at, $1)
             FROM due, webhook_endpoints w, events e
            WHERE d.id = due.id AND w.id = d.endpoint_id AND e.id = d.event_id
           RETURNING d.id, d.attempts, d.first_attempt_at, w.id AS endpoint_id, w.url, w.secret, w.previous_secret,
                     w.previous_secret_expires_at, e.position, e.type, e.actor, e.previous_status, e.data, e.created_at`,
    values: [new Date(claimedAt), new Date(claimedAt + settings.timeoutMs + CLAIM_MARGIN_MS)],
  });
  await Promise.all(rows.map((d) => attempt(pool, client, settings, now, d, box)));
  return rows.length;
}

async function attempt(pool: Db, client: OutboundClient, settings: DeliverySettings, now: () => number, d: Claimed, box: SecretBox): Promise<void> {
  const result = await send(client, settings, now, d, box);
  await settle(pool, settings, d, result, now());
  // A secret written in plain text (by a process from before sealing) is sealed once it has signed;
  // after the outcome is recorded, and a failure here only leaves it for the next attempt.
  await resealSecret(pool, box, d.endpoint_id, 'secret', d.secret).catch(() => false);
  if (d.previous_secret) await resealSecret(pool, box, d.endpoint_id, 'previous_secret', d.previous_secret).catch(() => false);
}

async function settle(pool: Db, settings: DeliverySettings, d: Claimed, result: OutboundResult, at: number): Promise<void> {
  const delivered = result.status !== null && result.status >= 200 && result.status < 300;
  const error = delivered ? null : (result.error ?? `answered ${result.status}`);
  const givingUp = !delivered && at - d.first_attempt_at.getTime() >= settings.disableAfterMs;
  const outcome = {
    text: `UPDATE webhook_deliveries SET status = $3::webhook_delivery_status, next_attempt_at = $4, last_status_code = $5,
             last_duration_ms = $6, last_error = $7, delivered_at = CASE WHEN $3::webhook_delivery_status = 'delivered' THEN $8 ELSE delivered_at END
           WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    values: [
      d.id,
      d.attempts,
      delivered ? 'delivered' : givingUp ? 'failed' : 'pending',
      delivered || givingUp ? null : new Date(at + retryDelay(d.attempts, settings.retryBaseMs)),
      result.status,
      result.durationMs,
      error,
      new Date(at),
    ],
  };
  // Guarded by the attempt number: a claim that lapsed and was taken again is no longer ours to settle.
  if (!givingUp) {
    await pool.query({ name: 'webhook_deliveries_outcome', ...outcome });
    return;
  }
  await withTransaction(pool, async (tx) => {
    await tx.query({ name: 'webhook_deliveries_outcome', ...outcome });
    await disableEndpoint(tx, d.endpoint_id, at);
  });
}

/**
 * Signs and sends one attempt. Whatever goes wrong on the way (a secret that cannot be opened or
 * cannot sign, a URL the client cannot request, an error thrown anywhere in between) is a failed
 * attempt like a refused connection: recorded, retried with backoff, counted towards disabling
 * the endpoint.
 */
async function send(client: OutboundClient, settings: DeliverySettings, now: () => number, d: Claimed, box: SecretBox): Promise<OutboundResult> {
  const started = performance.now();
  try {
    const body = webhookBody(d);
    const secrets = [await box.open(d.secret)];
    if (d.previous_secret && d.previous_secret_expires_at && d.previous_secret_expires_at.getTime() > now()) secrets.push(await box.open(d.previous_secret));
    // The signature's timestamp is the wall clock: receivers compare it with theirs.
    const headers = signedHeaders(eventId(d.position), body, secrets, new Date());
    return await client.post(d.url, body, headers, settings.timeoutMs);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { status: null, durationMs: Math.round(performance.now() - started), error: `could not send: ${message}`.slice(0, 300) };
  }
}

/**
 * Disables an endpoint whose deliveries kept failing: its pending deliveries fail with it, and
 * its owner gets `webhook_endpoint.disabled` (on the feed and their other endpoints).
 */
async function disableEndpoint(tx: Db, endpointId: number, now: number): Promise<void> {
  const { rows } = await tx.query<EndpointRow & { workspace_id: number | null; publisher_id: number | null }>({
    name: 'webhook_endpoints_disable',
    text: `UPDATE webhook_endpoints SET disabled_at = $2 WHERE id = $1 AND disabled_at IS NULL
           RETURNING id, url, event_types, disabled_at, created_at, workspace_id, publisher_id`,
    values: [endpointId, new Date(now)],
  });
  const endpoint = rows[0];
  if (!endpoint) return;
  await tx.query({
    name: 'webhook_deliveries_fail_pending',
    text: `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
             last_error = COALESCE(last_error, 'endpoint disabled') WHERE endpoint_id = $1 AND status = 'pending'`,
    values: [endpointId],
  });
  const owner: EventOwner =
    endpoint.workspace_id !== null ? { party: 'buyer', workspaceId: endpoint.workspace_id } : { party: 'publisher', publisherId: endpoint.publisher_id! };
  await recordEvents(tx, [{ type: 'webhook_endpoint.disabled', owner, actor: 'system', data: endpointView(endpoint) }], now);
}
