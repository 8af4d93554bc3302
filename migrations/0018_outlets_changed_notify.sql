-- Each process counts search matches in memory (src/domain/outlets/search-counter.ts) and reads
-- again the outlets a statement wrote: their ids, at most 800 per notification (a payload must
-- stay under 8,000 bytes), delivered when the transaction commits.
CREATE OR REPLACE FUNCTION outlets_notify_changed() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  chunk text;
BEGIN
  FOR chunk IN
    SELECT string_agg(w.id::text, ',') FROM (SELECT id, (row_number() OVER () - 1) / 800 AS part FROM written) w GROUP BY w.part
  LOOP
    PERFORM pg_notify('outlets_changed', chunk);
  END LOOP;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER outlets_changed_insert AFTER INSERT ON outlets
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION outlets_notify_changed();
--> statement-breakpoint
CREATE TRIGGER outlets_changed_update AFTER UPDATE ON outlets
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION outlets_notify_changed();
