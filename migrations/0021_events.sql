CREATE TYPE "public"."webhook_delivery_status" AS ENUM('pending', 'delivered', 'failed');--> statement-breakpoint
CREATE SEQUENCE "public"."event_positions" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"position" bigint,
	"type" text NOT NULL,
	"workspace_id" integer,
	"publisher_id" integer,
	"order_id" bigint,
	"actor" text NOT NULL,
	"previous_status" text,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "events_one_owner" CHECK (("events"."workspace_id" IS NULL) <> ("events"."publisher_id" IS NULL))
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" bigint NOT NULL,
	"endpoint_id" bigint NOT NULL,
	"status" "webhook_delivery_status" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"first_attempt_at" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"last_status_code" integer,
	"last_duration_ms" integer,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" integer,
	"publisher_id" integer,
	"url" text NOT NULL,
	"event_types" text[],
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webhook_endpoints_one_owner" CHECK (("webhook_endpoints"."workspace_id" IS NULL) <> ("webhook_endpoints"."publisher_id" IS NULL))
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_publisher_id_publishers_id_fk" FOREIGN KEY ("publisher_id") REFERENCES "public"."publishers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_position_uq" ON "events" USING btree ("position") WHERE "events"."position" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_unpositioned_idx" ON "events" USING btree ("id") WHERE "events"."position" IS NULL;--> statement-breakpoint
CREATE INDEX "events_workspace_idx" ON "events" USING btree ("workspace_id","position") WHERE "events"."position" IS NOT NULL AND "events"."workspace_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_publisher_idx" ON "events" USING btree ("publisher_id","position") WHERE "events"."position" IS NOT NULL AND "events"."publisher_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_order_idx" ON "events" USING btree ("order_id","position") WHERE "events"."position" IS NOT NULL AND "events"."order_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_workspace_idx" ON "webhook_endpoints" USING btree ("workspace_id") WHERE "webhook_endpoints"."workspace_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_endpoints_publisher_idx" ON "webhook_endpoints" USING btree ("publisher_id") WHERE "webhook_endpoints"."publisher_id" IS NOT NULL;