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
-- The console kept only its placements' new order ids ([1,2]); what a replay reads of them is each
-- order's id, so the ids become the value's orders.
ALTER TABLE "person_idempotency_records" ADD COLUMN "outcome" text;--> statement-breakpoint
UPDATE "person_idempotency_records" SET "outcome" = json_build_object('value',
  (SELECT COALESCE(json_agg(json_build_object('id', i.value) ORDER BY i.n), '[]'::json)
     FROM json_array_elements("response_body"::json) WITH ORDINALITY AS i(value, n)))::text;--> statement-breakpoint
ALTER TABLE "person_idempotency_records" ALTER COLUMN "outcome" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "mcp_confirmations" ADD COLUMN "outcome" json;--> statement-breakpoint
UPDATE "mcp_confirmations" SET "outcome" = json_build_object('value', COALESCE("result" -> 'orders', "result" -> 'order'));--> statement-breakpoint
ALTER TABLE "mcp_confirmations" ALTER COLUMN "outcome" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "response_status";--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP COLUMN "response_body";--> statement-breakpoint
ALTER TABLE "person_idempotency_records" DROP COLUMN "response_status";--> statement-breakpoint
ALTER TABLE "person_idempotency_records" DROP COLUMN "response_body";--> statement-breakpoint
ALTER TABLE "mcp_confirmations" DROP COLUMN "result";
