ALTER TABLE "api_keys" ADD COLUMN "order_limit_cents" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "daily_limit_cents" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "monthly_limit_cents" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_key_id" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_day_exhausted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_month_exhausted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "api_keys_budget_idx" ON "api_keys" USING btree ("budget_key_id") WHERE "api_keys"."budget_key_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "orders_placed_by_key_idx" ON "orders" USING btree ("placed_by_key_id","created_at");--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_limits" CHECK (("api_keys"."order_limit_cents" IS NULL OR "api_keys"."order_limit_cents" >= 0) AND ("api_keys"."daily_limit_cents" IS NULL OR "api_keys"."daily_limit_cents" >= 0) AND ("api_keys"."monthly_limit_cents" IS NULL OR "api_keys"."monthly_limit_cents" >= 0));