CREATE TYPE "public"."payout_status" AS ENUM('pending', 'sent', 'failed');--> statement-breakpoint
-- IF NOT EXISTS: the migration tests undo this migration by hand, and an enum value cannot be dropped.
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE IF NOT EXISTS 'payout_requested';--> statement-breakpoint
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE IF NOT EXISTS 'payout_sent';--> statement-breakpoint
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE IF NOT EXISTS 'payout_failed';--> statement-breakpoint
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE IF NOT EXISTS 'opening_balance';--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_balance_non_negative";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_owner_matches_kind";--> statement-breakpoint
-- 'in_payout' is used below in this same transaction (the owner CHECK), which a value added by
-- ALTER TYPE … ADD VALUE cannot be: the type is made anew with it instead (as 0037 did).
ALTER TYPE "public"."ledger_account_kind" RENAME TO "ledger_account_kind_old";--> statement-breakpoint
CREATE TYPE "public"."ledger_account_kind" AS ENUM('available', 'held', 'pending', 'payable', 'fees', 'external', 'adjustments', 'in_payout');--> statement-breakpoint
ALTER TABLE "ledger_accounts" ALTER COLUMN "kind" TYPE "public"."ledger_account_kind" USING "kind"::text::"public"."ledger_account_kind";--> statement-breakpoint
DROP TYPE "public"."ledger_account_kind_old";--> statement-breakpoint
CREATE TABLE "payout_destinations" (
	"publisher_id" integer PRIMARY KEY NOT NULL,
	"method" text NOT NULL,
	"details_sealed" text NOT NULL,
	"masked" text NOT NULL,
	"updated_by_user_id" integer NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payout_destinations_method" CHECK ("payout_destinations"."method" IN ('bank', 'paypal'))
);
--> statement-breakpoint
CREATE TABLE "payouts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"publisher_id" integer NOT NULL,
	"reference" text NOT NULL,
	"provider" text NOT NULL,
	"status" "payout_status" DEFAULT 'pending' NOT NULL,
	"amount_cents" bigint NOT NULL,
	"method" text NOT NULL,
	"destination_sealed" text NOT NULL,
	"destination_masked" text NOT NULL,
	"requested_by_user_id" integer NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"ledger_transaction_id" bigint NOT NULL,
	"batch_reference" text,
	"decided_by_user_id" integer,
	"decided_at" timestamp with time zone,
	"sent_reference" text,
	"failure_reason" text,
	"decided_ledger_transaction_id" bigint,
	CONSTRAINT "payouts_amount" CHECK ("payouts"."amount_cents" > 0),
	CONSTRAINT "payouts_sent" CHECK (("payouts"."status" = 'sent') = ("payouts"."sent_reference" IS NOT NULL)),
	CONSTRAINT "payouts_failed" CHECK (("payouts"."status" = 'failed') = ("payouts"."failure_reason" IS NOT NULL)),
	CONSTRAINT "payouts_decided" CHECK (("payouts"."status" = 'pending') = ("payouts"."decided_ledger_transaction_id" IS NULL))
);
--> statement-breakpoint
ALTER TABLE "payout_destinations" ADD CONSTRAINT "payout_destinations_publisher_id_publishers_id_fk" FOREIGN KEY ("publisher_id") REFERENCES "public"."publishers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_destinations" ADD CONSTRAINT "payout_destinations_updated_by_user_id_users_id_fk" FOREIGN KEY ("updated_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_publisher_id_publishers_id_fk" FOREIGN KEY ("publisher_id") REFERENCES "public"."publishers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_requested_by_user_id_users_id_fk" FOREIGN KEY ("requested_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_ledger_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("ledger_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_decided_by_user_id_users_id_fk" FOREIGN KEY ("decided_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_decided_ledger_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("decided_ledger_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_reference_uq" ON "payouts" USING btree ("reference");--> statement-breakpoint
CREATE INDEX "payouts_publisher_idx" ON "payouts" USING btree ("publisher_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "payouts_batch_idx" ON "payouts" USING btree ("batch_reference") WHERE "payouts"."batch_reference" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "payouts_pending_idx" ON "payouts" USING btree ("id") WHERE "payouts"."status" = 'pending';--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_balance_non_negative" CHECK ("ledger_accounts"."kind" IN ('external', 'adjustments') OR "ledger_accounts"."balance" >= 0);--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_owner_matches_kind" CHECK (("ledger_accounts"."kind" IN ('available', 'held') AND "ledger_accounts"."workspace_id" IS NOT NULL AND "ledger_accounts"."publisher_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('pending', 'payable', 'in_payout') AND "ledger_accounts"."publisher_id" IS NOT NULL AND "ledger_accounts"."workspace_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('fees', 'external', 'adjustments') AND "ledger_accounts"."workspace_id" IS NULL AND "ledger_accounts"."publisher_id" IS NULL));