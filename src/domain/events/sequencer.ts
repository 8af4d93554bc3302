import { withTransaction, type Db } from '../../db/handle.js';

// Any constant shared by every process: one sequencer at a time, whichever process runs it.
const SEQUENCER_LOCK = 72_616_022;
const BATCH = 1000;

export interface SequencerResult {
  /** Events given a feed position in this run. */
  positioned: number;
  /** Deliveries created for them (one per event and matching enabled endpoint). */
  deliveries: number;
}

/**
 * Gives committed events their feed positions and creates their webhook deliveries, in one
 * transaction. Ids come from a sequence and commit out of order, so a feed by id could show 7
 * before 6 commits and a follower past 7 would never see 6. Positions are handed out only here,
 * after commit, by one run at a time (the lock is held until this run commits), so an event that
 * committed late is positioned by a later run, above everything a follower has already read:
 * reading `position > after` never skips one. Safe in every process: a run that cannot take the
 * lock does nothing, another process's run is positioning the same events.
 */
export async function sequenceEvents(pool: Db, now: number): Promise<SequencerResult> {
  let total: SequencerResult = { positioned: 0, deliveries: 0 };
  for (;;) {
    const run = await withTransaction(pool, async (tx) => {
      const lock = await tx.query<{ ok: boolean }>({
        name: 'events_sequencer_lock',
        text: 'SELECT pg_try_advisory_xact_lock($1) AS ok',
        values: [SEQUENCER_LOCK],
      });
      if (!lock.rows[0]!.ok) return null;
      // This statement's snapshot is taken after the lock, so it sees every position the previous
      // run gave: no event is positioned twice.
      const { rows } = await tx.query<{ positioned: number; deliveries: number }>({
        name: 'events_sequence',
        text: `WITH ready AS (
                 SELECT id FROM events
                  WHERE position IS NULL
                  ORDER BY id LIMIT ${BATCH}
               ), numbered AS (
                 SELECT id, nextval('event_positions') AS position FROM (SELECT id FROM ready ORDER BY id) r
               ), positioned AS (
                 UPDATE events e SET position = n.position FROM numbered n WHERE e.id = n.id
                 RETURNING e.id, e.type, e.workspace_id, e.publisher_id
               ), fanned AS (
                 INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
                 SELECT p.id, w.id, $1, $1 FROM positioned p
                   JOIN webhook_endpoints w
                     ON (w.workspace_id = p.workspace_id OR w.publisher_id = p.publisher_id)
                    AND w.disabled_at IS NULL
                    AND (w.event_types IS NULL OR p.type = ANY(w.event_types))
                 RETURNING 1
               )
               SELECT (SELECT count(*) FROM positioned)::int AS positioned, (SELECT count(*) FROM fanned)::int AS deliveries`,
        values: [new Date(now)],
      });
      return rows[0]!;
    });
    if (run === null) return total;
    total = { positioned: total.positioned + run.positioned, deliveries: total.deliveries + run.deliveries };
    if (run.positioned < BATCH) return total;
  }
}
