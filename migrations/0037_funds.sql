CREATE TYPE "public"."top_up_status" AS ENUM('pending', 'confirmed', 'cancelled', 'rejected');--> statement-breakpoint
-- IF NOT EXISTS: the migration tests undo this migration by hand, and an enum value cannot be dropped.
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE IF NOT EXISTS 'adjustment';--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_balance_non_negative";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_owner_matches_kind";--> statement-breakpoint
-- 'adjustments' is used below in this same transaction, which a value added by ALTER TYPE … ADD VALUE
-- cannot be: the type is made anew with it instead (as 0022 did for 'pending').
ALTER TYPE "public"."ledger_account_kind" RENAME TO "ledger_account_kind_old";--> statement-breakpoint
CREATE TYPE "public"."ledger_account_kind" AS ENUM('available', 'held', 'pending', 'payable', 'fees', 'external', 'adjustments');--> statement-breakpoint
ALTER TABLE "ledger_accounts" ALTER COLUMN "kind" TYPE "public"."ledger_account_kind" USING "kind"::text::"public"."ledger_account_kind";--> statement-breakpoint
DROP TYPE "public"."ledger_account_kind_old";--> statement-breakpoint
CREATE TABLE "ledger_adjustments" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"amount_cents" bigint NOT NULL,
	"reason" text NOT NULL,
	"staff_user_id" integer NOT NULL,
	"ledger_transaction_id" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "ledger_adjustments_amount" CHECK ("ledger_adjustments"."amount_cents" <> 0),
	CONSTRAINT "ledger_adjustments_reason" CHECK (length(btrim("ledger_adjustments"."reason")) > 0)
);
--> statement-breakpoint
CREATE TABLE "top_up_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"reference" text NOT NULL,
	"provider" text NOT NULL,
	"status" "top_up_status" DEFAULT 'pending' NOT NULL,
	"amount_cents" bigint NOT NULL,
	"received_cents" bigint,
	"instructions" text NOT NULL,
	"requested_by_user_id" integer,
	"requested_by_key_id" integer,
	"requested_at" timestamp with time zone NOT NULL,
	"decided_by_user_id" integer,
	"decided_by_key_id" integer,
	"decided_at" timestamp with time zone,
	"reject_reason" text,
	"ledger_transaction_id" bigint,
	CONSTRAINT "top_up_requests_amount" CHECK ("top_up_requests"."amount_cents" > 0),
	CONSTRAINT "top_up_requests_received" CHECK ("top_up_requests"."received_cents" IS NULL OR "top_up_requests"."received_cents" > 0),
	CONSTRAINT "top_up_requests_requester" CHECK (num_nonnulls("top_up_requests"."requested_by_user_id", "top_up_requests"."requested_by_key_id") = 1),
	CONSTRAINT "top_up_requests_confirmed" CHECK (("top_up_requests"."status" = 'confirmed') = ("top_up_requests"."ledger_transaction_id" IS NOT NULL AND "top_up_requests"."received_cents" IS NOT NULL))
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "is_staff" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD CONSTRAINT "ledger_adjustments_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD CONSTRAINT "ledger_adjustments_staff_user_id_users_id_fk" FOREIGN KEY ("staff_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD CONSTRAINT "ledger_adjustments_ledger_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("ledger_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_requested_by_user_id_users_id_fk" FOREIGN KEY ("requested_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_requested_by_key_id_api_keys_id_fk" FOREIGN KEY ("requested_by_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_decided_by_user_id_users_id_fk" FOREIGN KEY ("decided_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_decided_by_key_id_api_keys_id_fk" FOREIGN KEY ("decided_by_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_requests" ADD CONSTRAINT "top_up_requests_ledger_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("ledger_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_adjustments_workspace_idx" ON "ledger_adjustments" USING btree ("workspace_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_adjustments_transaction_uq" ON "ledger_adjustments" USING btree ("ledger_transaction_id");--> statement-breakpoint
CREATE UNIQUE INDEX "top_up_requests_reference_uq" ON "top_up_requests" USING btree ("reference");--> statement-breakpoint
CREATE INDEX "top_up_requests_workspace_idx" ON "top_up_requests" USING btree ("workspace_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "top_up_requests_pending_idx" ON "top_up_requests" USING btree ("id") WHERE "top_up_requests"."status" = 'pending';--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_balance_non_negative" CHECK ("ledger_accounts"."kind" IN ('external', 'adjustments') OR "ledger_accounts"."balance" >= 0);--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_owner_matches_kind" CHECK (("ledger_accounts"."kind" IN ('available', 'held') AND "ledger_accounts"."workspace_id" IS NOT NULL AND "ledger_accounts"."publisher_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('pending', 'payable') AND "ledger_accounts"."publisher_id" IS NOT NULL AND "ledger_accounts"."workspace_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('fees', 'external', 'adjustments') AND "ledger_accounts"."workspace_id" IS NULL AND "ledger_accounts"."publisher_id" IS NULL));--> statement-breakpoint
-- The platform's side of staff adjustments.
INSERT INTO "ledger_accounts" ("kind") VALUES ('adjustments') ON CONFLICT ON CONSTRAINT "ledger_accounts_owner_uq" DO NOTHING;
