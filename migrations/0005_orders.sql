CREATE TYPE "public"."order_party" AS ENUM('buyer', 'publisher');--> statement-breakpoint
CREATE TYPE "public"."order_status" AS ENUM('awaiting_content', 'awaiting_acceptance', 'writing', 'draft_review', 'publishing', 'live_review', 'completed', 'declined', 'expired', 'cancelled');--> statement-breakpoint
CREATE TABLE "idempotency_records" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"api_key_id" integer NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_records_key_uq" UNIQUE("api_key_id","key")
);
--> statement-breakpoint
CREATE TABLE "order_contents" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"version" integer NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"submitted_by" "order_party" NOT NULL,
	"submitted_at" timestamp with time zone NOT NULL,
	"checks" jsonb NOT NULL,
	CONSTRAINT "order_contents_version_uq" UNIQUE("order_id","version")
);
--> statement-breakpoint
CREATE TABLE "order_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"author" "order_party" NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"project_id" integer,
	"placed_by_key_id" integer NOT NULL,
	"outlet_id" integer NOT NULL,
	"offer_id" integer NOT NULL,
	"publisher_id" integer NOT NULL,
	"status" "order_status" NOT NULL,
	"publisher_price_cents" bigint NOT NULL,
	"fee_cents" bigint NOT NULL,
	"price" bigint NOT NULL,
	"content_by" "content_by" NOT NULL,
	"turnaround_days" integer NOT NULL,
	"target_url" text NOT NULL,
	"anchor_text" text,
	"brief" text,
	"live_url" text,
	"decline_reason" text,
	"deadline_at" timestamp with time zone,
	"state_entered_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"published_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "orders_amounts" CHECK ("orders"."price" = "orders"."publisher_price_cents" + "orders"."fee_cents" AND "orders"."publisher_price_cents" > 0 AND "orders"."fee_cents" >= 0)
);
--> statement-breakpoint
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_contents" ADD CONSTRAINT "order_contents_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_messages" ADD CONSTRAINT "order_messages_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_placed_by_key_id_api_keys_id_fk" FOREIGN KEY ("placed_by_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_outlet_id_outlets_id_fk" FOREIGN KEY ("outlet_id") REFERENCES "public"."outlets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_offer_id_offers_id_fk" FOREIGN KEY ("offer_id") REFERENCES "public"."offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_publisher_id_publishers_id_fk" FOREIGN KEY ("publisher_id") REFERENCES "public"."publishers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_records_expiry_idx" ON "idempotency_records" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "order_messages_order_idx" ON "order_messages" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "orders_workspace_idx" ON "orders" USING btree ("workspace_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "orders_publisher_idx" ON "orders" USING btree ("publisher_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "orders_outlet_idx" ON "orders" USING btree ("outlet_id");--> statement-breakpoint
CREATE INDEX "orders_offer_idx" ON "orders" USING btree ("offer_id");--> statement-breakpoint
CREATE INDEX "orders_project_idx" ON "orders" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "orders_key_idx" ON "orders" USING btree ("placed_by_key_id");--> statement-breakpoint
CREATE INDEX "orders_deadline_idx" ON "orders" USING btree ("deadline_at") WHERE "orders"."status" NOT IN ('completed', 'declined', 'expired', 'cancelled');--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;