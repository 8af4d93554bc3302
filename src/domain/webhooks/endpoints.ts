import { randomBytes } from 'node:crypto';
import { type Db, withTransaction } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { type Kept, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import { type EventOwner, type EventType, eventId, ownerColumn, ownerId, requireReceivable } from '../events/event-types.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { judgeTarget, type OutboundPolicy } from '../../outbound/address-policy.js';
import { urlTextProblem } from '../http-url.js';
import type { SecretBox } from './secret-box.js';

/** Endpoints per workspace or publisher: enough for a few environments, bounded fan-out per event. */
export const MAX_ENDPOINTS = 20;
/**
 * Resends per endpoint per minute (each is a request to the receiver): enough to replay a few
 * missed events by hand; more is what the automatic retries are for.
 */
export const RESENDS_PER_MINUTE = 10;
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface EndpointRow {
  id: number;
  url: string;
  event_types: EventType[] | null;
  disabled_at: Date | null;
  created_at: Date;
}

export const endpointView = (r: EndpointRow) => ({
  id: r.id,
  url: r.url,
  events: r.event_types,
  disabled_at: isoSeconds(r.disabled_at),
  created_at: isoSeconds(r.created_at)!,
});
export type EndpointView = ReturnType<typeof endpointView>;

/** A Standard Webhooks secret: whsec_ and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const ENDPOINT_COLUMNS = 'id, url, event_types, disabled_at, created_at';

/**
 * Refuses a URL webhooks may not go to, or answers it normalised as the WHATWG parser writes it
 * (lower-case scheme and host), which is what is stored and sent to. DNS is asked here: call it
 * before the transaction.
 */
export async function checkEndpointUrl(url: string, policy: OutboundPolicy): Promise<string> {
  // Checked as sent, as link URLs are (docs/http.md): the URL parser would drop a tab or encode a
  // space, and the endpoint stored would be another than the one given.
  // Text that is no URL at all is told that below, not which of its characters are wrong.
  const problem = URL.canParse(url) ? urlTextProblem(url) : undefined;
  if (problem !== undefined) throw invalidInput({ url: [problem] });
  const judged = await judgeTarget(url, policy);
  if (judged.refused !== null) throw invalidInput({ url: [judged.refused] });
  return judged.url;
}

/** Stores a new endpoint whose URL `checkEndpointUrl` accepted; the answer is the only one showing its secret. */
export async function createEndpoint(
  tx: Db,
  owner: EventOwner,
  input: { url: string; events?: EventType[] | undefined },
  now: number,
  box: SecretBox,
): Promise<EndpointView & { secret: string }> {
  requireReceivable(owner, input.events, 'events');
  const secret = newSecret();
  const sealed = await box.seal(secret);
  {
    // One creation at a time per owner, so the count below stays true until commit.
    await tx.query({
      name: 'webhook_endpoints_owner_lock',
      text: `SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1::text || ':' || $2::text))`,
      values: [owner.party, ownerId(owner)],
    });
    const count = await tx.query<{ n: number }>({
      name: `webhook_endpoints_count_${owner.party}`,
      text: `SELECT count(*)::int AS n FROM webhook_endpoints WHERE ${ownerColumn(owner)} = $1`,
      values: [ownerId(owner)],
    });
    if (count.rows[0]!.n >= MAX_ENDPOINTS) {
      throw new DomainError('conflict', `At most ${MAX_ENDPOINTS} webhook endpoints; delete one first.`, { status: 'limit_reached' });
    }
    const { rows } = await tx.query<EndpointRow>({
      name: `webhook_endpoints_insert_${owner.party}`,
      text: `INSERT INTO webhook_endpoints (${ownerColumn(owner)}, url, event_types, secret, created_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING ${ENDPOINT_COLUMNS}`,
      values: [ownerId(owner), input.url, input.events ?? null, sealed, new Date(now)],
    });
    return { ...endpointView(rows[0]!), secret };
  }
}

export async function listEndpoints(pool: Db, owner: EventOwner): Promise<EndpointView[]> {
  const { rows } = await pool.query<EndpointRow>({
    name: `webhook_endpoints_list_${owner.party}`,
    text: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${ownerColumn(owner)} = $1 ORDER BY id`,
    values: [ownerId(owner)],
  });
  return rows.map(endpointView);
}

/** Whose endpoint this is (for the admin CLI, which names endpoints by id alone). */
export async function endpointOwner(pool: Db, id: number): Promise<EventOwner> {
  const { rows } = await pool.query<{ workspace_id: number | null; publisher_id: number | null }>(
    'SELECT workspace_id, publisher_id FROM webhook_endpoints WHERE id = $1',
    [id],
  );
  if (!rows[0]) throw notFound('Webhook endpoint');
  return rows[0].workspace_id !== null ? { party: 'buyer', workspaceId: rows[0].workspace_id } : { party: 'publisher', publisherId: rows[0].publisher_id! };
}

/** Deletes an endpoint with its delivery log; another owner's endpoint answers 404, like a missing one. */
export async function deleteEndpoint(pool: Db, owner: EventOwner, id: number): Promise<void> {
  const { rowCount } = await pool.query({
    name: `webhook_endpoints_delete_${owner.party}`,
    text: `DELETE FROM webhook_endpoints WHERE id = $1 AND ${ownerColumn(owner)} = $2`,
    values: [id, ownerId(owner)],
  });
  if (!rowCount) throw notFound('Webhook endpoint');
}

/** A new secret; the current one keeps signing beside it for a day, so receivers can switch. */
export async function rotateSecret(pool: Db, owner: EventOwner, id: number, now: number, box: SecretBox): Promise<EndpointView & { secret: string }> {
  const secret = newSecret();
  const sealed = await box.seal(secret);
  const { rows } = await pool.query<EndpointRow>({
    name: `webhook_endpoints_rotate_${owner.party}`,
    text: `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $3, secret = $4
            WHERE id = $1 AND ${ownerColumn(owner)} = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    values: [id, ownerId(owner), new Date(now + ROTATION_OVERLAP_MS), sealed],
  });
  if (!rows[0]) throw notFound('Webhook endpoint');
  return { ...endpointView(rows[0]), secret };
}

interface DeliveryRow {
  id: number;
  position: number;
  type: EventType;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  first_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

const deliveryView = (r: DeliveryRow) => ({
  id: r.id,
  event_id: eventId(r.position),
  event_type: r.type,
  status: r.status,
  attempts: r.attempts,
  response_status_code: r.last_status_code,
  duration_ms: r.last_duration_ms,
  error: r.last_error,
  next_attempt_at: r.status === 'pending' ? isoSeconds(r.next_attempt_at) : null,
  first_attempt_at: isoSeconds(r.first_attempt_at),
  last_attempt_at: isoSeconds(r.last_attempt_at),
  delivered_at: isoSeconds(r.delivered_at),
  created_at: isoSeconds(r.created_at)!,
});
export type DeliveryView = ReturnType<typeof deliveryView>;

const DELIVERY_COLUMNS = `d.id, e.position, e.type, d.status, d.attempts, d.next_attempt_at, d.first_attempt_at, d.last_attempt_at,
  d.last_status_code, d.last_duration_ms, d.last_error, d.delivered_at, d.created_at`;

async function requireEndpoint(q: Db, owner: EventOwner, id: number): Promise<{ disabled: boolean }> {
  const { rows } = await q.query<{ disabled: boolean }>({
    name: `webhook_endpoint_owned_${owner.party}`,
    text: `SELECT disabled_at IS NOT NULL AS disabled FROM webhook_endpoints WHERE id = $1 AND ${ownerColumn(owner)} = $2`,
    values: [id, ownerId(owner)],
  });
  if (!rows[0]) throw notFound('Webhook endpoint');
  return rows[0];
}

/** An endpoint's delivery log, newest first. */
export async function listDeliveries(pool: Db, owner: EventOwner, endpointId: number, page: number, perPage: number) {
  await requireEndpoint(pool, owner, endpointId);
  const [rows, count] = await Promise.all([
    pool.query<DeliveryRow>({
      name: 'webhook_deliveries_page',
      text: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
              WHERE d.endpoint_id = $1 ORDER BY d.id DESC LIMIT $2 OFFSET $3`,
      values: [endpointId, perPage, (page - 1) * perPage],
    }),
    pool.query<{ n: number }>({
      name: 'webhook_deliveries_count',
      text: 'SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1',
      values: [endpointId],
    }),
  ]);
  return { items: rows.rows.map(deliveryView), total: count.rows[0]!.n };
}

/** Sends a delivery's event again, as a new delivery due now (same webhook-id: the receiver can tell). */
export async function resendDelivery(pool: Db, owner: EventOwner, endpointId: number, deliveryId: number, now: number): Promise<DeliveryView> {
  const { disabled } = await requireEndpoint(pool, owner, endpointId);
  if (disabled) throw new DomainError('conflict', 'The endpoint is disabled; create a new one to receive events again.', { status: 'disabled' });
  const { rows } = await pool.query<DeliveryRow>({
    name: 'webhook_deliveries_resend',
    text: `WITH again AS (
             INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
             SELECT event_id, endpoint_id, $3, $3 FROM webhook_deliveries WHERE id = $2 AND endpoint_id = $1
             RETURNING *
           )
           SELECT ${DELIVERY_COLUMNS} FROM again d JOIN events e ON e.id = d.event_id`,
    values: [endpointId, deliveryId, new Date(now)],
  });
  if (!rows[0]) throw notFound('Delivery');
  return deliveryView(rows[0]);
}

type Created = EndpointView & { secret: string };
type EndpointInput = { url: string; events?: EventType[] | undefined };

/** Checks the URL, then stores the endpoint in a transaction of its own. */
export async function addEndpoint(pool: Db, owner: EventOwner, input: EndpointInput, policy: OutboundPolicy, now: number, box: SecretBox): Promise<Created> {
  const url = await checkEndpointUrl(input.url, policy);
  return withTransaction(pool, (tx) => createEndpoint(tx, owner, { ...input, url }, now, box));
}

export interface EndpointActionDeps {
  pool: Db;
  clock: Clock;
  outboundPolicy: OutboundPolicy;
  /** Seals the signing secrets (secret-box.ts). */
  secrets: SecretBox;
}

/**
 * Runs a change that answers a new secret, kept once: the kept answer (24 h in the database, for
 * replays) holds the secret sealed, as the endpoint's row does; the caller gets it opened.
 */
async function keptSealed(deps: EndpointActionDeps, options: OnceOptions, work: (tx: Db, now: number) => Promise<Created>): Promise<Kept<Created>> {
  const kept = await runOnce(deps, options, async (tx, now) => {
    const done = await work(tx, now);
    return { ...done, secret: await deps.secrets.seal(done.secret) };
  });
  return kept.ok ? { ...kept, value: { ...kept.value, secret: await deps.secrets.open(kept.value.secret) } } : kept;
}

/**
 * The endpoint changes as routes call them: one call each, in its own transaction, kept once
 * under `options.once` (a REST Idempotency-Key; none: not kept) and answered as its outcome; each adapter encodes it.
 */
export const webhookEndpoints = {
  /** The URL is checked first, outside any transaction: resolving its host may take a while. */
  async create(deps: EndpointActionDeps, owner: EventOwner, input: EndpointInput, options: OnceOptions) {
    const url = await checkEndpointUrl(input.url, deps.outboundPolicy);
    return keptSealed(deps, options, (tx, now) => createEndpoint(tx, owner, { ...input, url }, now, deps.secrets));
  },
  rotateSecret: (deps: EndpointActionDeps, owner: EventOwner, id: number, options: OnceOptions) =>
    keptSealed(deps, options, (tx, now) => rotateSecret(tx, owner, id, now, deps.secrets)),
  resend: (deps: EndpointActionDeps, owner: EventOwner, endpointId: number, deliveryId: number, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => resendDelivery(tx, owner, endpointId, deliveryId, now)),
};
