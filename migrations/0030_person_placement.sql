CREATE TABLE "person_idempotency_records" (
	"user_id" integer NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "person_idempotency_records_key_pk" PRIMARY KEY("user_id","key")
);
--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "placed_by_key_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "placed_by_user_id" integer;--> statement-breakpoint
CREATE INDEX "person_idempotency_records_expiry_idx" ON "person_idempotency_records" USING btree ("expires_at");--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_placed_by" CHECK (num_nonnulls("orders"."placed_by_key_id", "orders"."placed_by_user_id") = 1);