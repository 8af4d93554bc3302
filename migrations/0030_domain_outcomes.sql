-- Records keep the domain's outcome, not an HTTP answer: each adapter encodes it. Rows kept before
-- this are rewritten in the same shape, so their replays send the same bytes as before.
ALTER TABLE "idempotency_records" ADD COLUMN "outcome" text;--> statement-breakpoint
UPDATE "idempotency_records" SET "outcome" = CASE
  WHEN "response_status" < 300 THEN '{"value":' || ("response_body"::json -> 'data')::text || '}'
  ELSE json_build_object(
    'error', json_build_object(
      'code', "response_body"::json -> 'code',
      'message', "response_body"::json -> 'message',
      'details', (SELECT COALESCE(json_object_agg(e.key, e.value ORDER BY e.n), '{}'::json)
                    FROM json_each("response_body"::json) WITH ORDINALITY AS e(key, value, n)
                   WHERE e.key NOT IN ('message', 'code', 'request_id'))),
    'request_id', "response_body"::json -> 'request_id')::text
END;--> statement-breakpoint
ALTER TABLE "idempotency_records" ALTER COLUMN "outcome" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "mcp_confirmations" ADD COLUMN "outcome" json;--> statement-breakpoint
UPDATE "mcp_confirmations" SET "outcome" = json_build_object('value', COALESCE("result" -> 'orders', "result" -> 'order'));--> statement-breakpoint
ALTER TABLE "mcp_confirmations" ALTER COLUMN "outcome" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "response_status";--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "response_body";--> statement-breakpoint
ALTER TABLE "mcp_confirmations" DROP COLUMN "result";
