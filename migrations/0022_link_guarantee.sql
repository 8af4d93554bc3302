ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE 'payout_released';--> statement-breakpoint
ALTER TYPE "public"."ledger_transaction_kind" ADD VALUE 'guarantee_refunded';--> statement-breakpoint
ALTER TYPE "public"."order_status" ADD VALUE 'link_lost' BEFORE 'declined';--> statement-breakpoint
ALTER TYPE "public"."order_status" ADD VALUE 'link_refunded';--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_owner_matches_kind";--> statement-breakpoint
-- 'pending' is used below in this same transaction, which a value added by ALTER TYPE … ADD VALUE
-- cannot be: the type is made anew with it instead.
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_balance_non_negative";--> statement-breakpoint
ALTER TYPE "public"."ledger_account_kind" RENAME TO "ledger_account_kind_old";--> statement-breakpoint
CREATE TYPE "public"."ledger_account_kind" AS ENUM('available', 'held', 'pending', 'payable', 'fees', 'external');--> statement-breakpoint
ALTER TABLE "ledger_accounts" ALTER COLUMN "kind" TYPE "public"."ledger_account_kind" USING "kind"::text::"public"."ledger_account_kind";--> statement-breakpoint
DROP TYPE "public"."ledger_account_kind_old";--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_balance_non_negative" CHECK ("ledger_accounts"."kind" = 'external' OR "ledger_accounts"."balance" >= 0);--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "live_checks" jsonb;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "live_checked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "live_passed" boolean;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "first_check_passed" boolean;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "live_returns" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "link_check_due_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "guarantee_ends_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "payout_released_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "alive_30d" boolean;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "alive_60d" boolean;--> statement-breakpoint
CREATE INDEX "orders_link_check_due_idx" ON "orders" USING btree ("link_check_due_at") WHERE "orders"."link_check_due_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_owner_matches_kind" CHECK (("ledger_accounts"."kind" IN ('available', 'held') AND "ledger_accounts"."workspace_id" IS NOT NULL AND "ledger_accounts"."publisher_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('pending', 'payable') AND "ledger_accounts"."publisher_id" IS NOT NULL AND "ledger_accounts"."workspace_id" IS NULL)
        OR ("ledger_accounts"."kind" IN ('fees', 'external') AND "ledger_accounts"."workspace_id" IS NULL AND "ledger_accounts"."publisher_id" IS NULL));--> statement-breakpoint
-- Every publisher holds payouts still under the link guarantee in a pending account.
INSERT INTO "ledger_accounts" ("kind", "publisher_id") SELECT 'pending', "id" FROM "publishers"
ON CONFLICT ON CONSTRAINT "ledger_accounts_owner_uq" DO NOTHING;
