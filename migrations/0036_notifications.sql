CREATE TABLE "event_cursors" (
	"name" text PRIMARY KEY NOT NULL,
	"position" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_digest_items" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"workspace_id" integer,
	"publisher_id" integer,
	"kind" text NOT NULL,
	"subject_id" bigint NOT NULL,
	"order_id" bigint,
	"order_status" text,
	"line" text NOT NULL,
	"url" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_reminders" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"subject_id" bigint NOT NULL,
	"subject_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "notifications" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "list_unsubscribe" text;--> statement-breakpoint
ALTER TABLE "notification_digest_items" ADD CONSTRAINT "notification_digest_items_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "notification_digest_items_once_uq" ON "notification_digest_items" USING btree ("kind","subject_id","user_id");--> statement-breakpoint
CREATE INDEX "notification_digest_items_user_idx" ON "notification_digest_items" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "notification_digest_items_created_idx" ON "notification_digest_items" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "notification_reminders_once_uq" ON "notification_reminders" USING btree ("kind","subject_id","subject_at");--> statement-breakpoint
CREATE INDEX "notification_reminders_created_idx" ON "notification_reminders" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "api_keys_expires_idx" ON "api_keys" USING btree ("expires_at") WHERE "api_keys"."expires_at" IS NOT NULL AND "api_keys"."revoked_at" IS NULL;