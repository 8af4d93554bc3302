CREATE TYPE "public"."approval_action" AS ENUM('place_orders', 'approve_placement');--> statement-breakpoint
CREATE TYPE "public"."approval_status" AS ENUM('pending', 'approved', 'declined', 'expired', 'cancelled', 'failed');--> statement-breakpoint
CREATE TABLE "approval_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"action" "approval_action" NOT NULL,
	"status" "approval_status" DEFAULT 'pending' NOT NULL,
	"requested_by_key_id" integer NOT NULL,
	"body" jsonb NOT NULL,
	"fingerprint" text NOT NULL,
	"order_id" bigint,
	"total_cents" bigint NOT NULL,
	"items" jsonb NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decided_by_user_id" integer,
	"decided_at" timestamp with time zone,
	"decline_reason" text,
	"order_ids" bigint[] DEFAULT '{}'::bigint[] NOT NULL,
	"failure" jsonb,
	CONSTRAINT "approval_requests_total" CHECK ("approval_requests"."total_cents" >= 0)
);
--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "approval_above_cents" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "needs_approval" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "approval_request_id" bigint;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_requested_by_key_id_api_keys_id_fk" FOREIGN KEY ("requested_by_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_decided_by_user_id_users_id_fk" FOREIGN KEY ("decided_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approval_requests_workspace_idx" ON "approval_requests" USING btree ("workspace_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "approval_requests_pending_idx" ON "approval_requests" USING btree ("workspace_id") WHERE "approval_requests"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "approval_requests_expiry_idx" ON "approval_requests" USING btree ("expires_at") WHERE "approval_requests"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "approval_requests_pending_body_uq" ON "approval_requests" USING btree ("requested_by_key_id","fingerprint") WHERE "approval_requests"."status" = 'pending';