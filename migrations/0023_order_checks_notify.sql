-- Each process's search index (src/domain/outlets/search-counter.ts) holds every outlet's link
-- survival and verification figures, which the sorts by them read; they come from the outlet's
-- orders. When an order's check results change, the outlet is read again, as after a write to it
-- (notifications are delivered at commit; one per outlet and transaction).
CREATE OR REPLACE FUNCTION orders_notify_checks() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outlets_changed', NEW.outlet_id::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER orders_checks_changed AFTER UPDATE OF first_check_passed, alive_30d, alive_60d ON orders
  FOR EACH ROW
  WHEN (OLD.first_check_passed IS DISTINCT FROM NEW.first_check_passed
        OR OLD.alive_30d IS DISTINCT FROM NEW.alive_30d
        OR OLD.alive_60d IS DISTINCT FROM NEW.alive_60d)
  EXECUTE FUNCTION orders_notify_checks();
