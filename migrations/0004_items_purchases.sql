CREATE TYPE "public"."item_kind" AS ENUM('software', 'graphics', 'video', 'audio', 'other');--> statement-breakpoint
CREATE TYPE "public"."license_type" AS ENUM('regular', 'extended');--> statement-breakpoint
CREATE TABLE "items" (
	"id" serial PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"kind" "item_kind" NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"category" text NOT NULL,
	"sub_category" text NOT NULL,
	"options" text[] DEFAULT '{}' NOT NULL,
	"version" text NOT NULL,
	"demo_link" text NOT NULL,
	"tags" text[] DEFAULT '{}' NOT NULL,
	"thumbnail_url" text NOT NULL,
	"preview_image_url" text,
	"preview_video_url" text,
	"preview_audio_url" text,
	"screenshots" text[] DEFAULT '{}' NOT NULL,
	"price_regular_cents" bigint NOT NULL,
	"price_extended_cents" bigint NOT NULL,
	"currency" char(3) DEFAULT 'USD' NOT NULL,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "items_version_semver" CHECK ("items"."version" ~ '^[0-9]+\.[0-9]+\.[0-9]+$'),
	CONSTRAINT "items_prices" CHECK ("items"."price_regular_cents" >= 0 AND "items"."price_extended_cents" >= 0)
);
--> statement-breakpoint
CREATE TABLE "purchases" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"code" uuid NOT NULL,
	"item_id" integer NOT NULL,
	"workspace_id" integer NOT NULL,
	"license" "license_type" NOT NULL,
	"price_cents" bigint NOT NULL,
	"currency" char(3) NOT NULL,
	"supported_until" timestamp with time zone,
	"downloaded" boolean DEFAULT false NOT NULL,
	"purchased_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refunded_at" timestamp with time zone,
	CONSTRAINT "purchases_code_unique" UNIQUE("code"),
	CONSTRAINT "purchases_price" CHECK ("purchases"."price_cents" >= 0)
);
--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_currency_fx_rates_currency_fk" FOREIGN KEY ("currency") REFERENCES "public"."fx_rates"("currency") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_item_id_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."items"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_currency_fx_rates_currency_fk" FOREIGN KEY ("currency") REFERENCES "public"."fx_rates"("currency") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "items_workspace_idx" ON "items" USING btree ("workspace_id","id");--> statement-breakpoint
CREATE INDEX "items_currency_idx" ON "items" USING btree ("currency");--> statement-breakpoint
CREATE INDEX "purchases_item_idx" ON "purchases" USING btree ("item_id");--> statement-breakpoint
CREATE INDEX "purchases_workspace_idx" ON "purchases" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "purchases_currency_idx" ON "purchases" USING btree ("currency");