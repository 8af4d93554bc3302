CREATE TYPE "public"."outlet_type" AS ENUM('blog', 'news', 'magazine', 'niche_site', 'press');--> statement-breakpoint
CREATE TYPE "public"."content_by" AS ENUM('buyer', 'publisher');--> statement-breakpoint
CREATE TYPE "public"."link_type" AS ENUM('dofollow', 'nofollow');--> statement-breakpoint
CREATE TYPE "public"."offer_format" AS ENUM('guest_post', 'sponsored_article', 'link_insertion', 'press_release');--> statement-breakpoint
CREATE TABLE "outlets" (
	"id" serial PRIMARY KEY NOT NULL,
	"publisher_id" integer NOT NULL,
	"name" text NOT NULL,
	"domain" text NOT NULL,
	"url" text NOT NULL,
	"description" text NOT NULL,
	"type" "outlet_type" NOT NULL,
	"country" char(2) NOT NULL,
	"language" char(2) NOT NULL,
	"topics" text[] DEFAULT '{}' NOT NULL,
	"monthly_visits" bigint NOT NULL,
	"traffic_verified" boolean DEFAULT false NOT NULL,
	"traffic_verified_at" timestamp with time zone,
	"base_orders_completed" integer DEFAULT 0 NOT NULL,
	"base_on_time_rate" numeric(4, 3),
	"base_acceptance_rate" numeric(4, 3),
	"base_avg_turnaround_days" numeric(5, 1),
	"base_rating" numeric(2, 1),
	"search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple', "outlets"."name"), 'A')
          || setweight(to_tsvector('simple', replace("outlets"."domain", '.', ' ')), 'A')
          || setweight(to_tsvector('simple', immutable_array_to_string("outlets"."topics", ' ')), 'B')
          || setweight(to_tsvector('english', "outlets"."description"), 'C')) STORED NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "outlets_domain_unique" UNIQUE("domain")
);
--> statement-breakpoint
CREATE TABLE "offers" (
	"id" serial PRIMARY KEY NOT NULL,
	"outlet_id" integer NOT NULL,
	"format" "offer_format" NOT NULL,
	"title" text NOT NULL,
	"publisher_price_cents" bigint NOT NULL,
	"fee_cents" bigint NOT NULL,
	"price" bigint GENERATED ALWAYS AS (publisher_price_cents + fee_cents) STORED NOT NULL,
	"turnaround_days" integer NOT NULL,
	"content_by" "content_by" NOT NULL,
	"min_words" integer NOT NULL,
	"max_words" integer NOT NULL,
	"max_links" integer NOT NULL,
	"link_type" "link_type" NOT NULL,
	"sponsored_label" boolean NOT NULL,
	"permanent" boolean NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "offers_prices_positive" CHECK ("offers"."publisher_price_cents" > 0 AND "offers"."fee_cents" >= 0),
	CONSTRAINT "offers_words" CHECK ("offers"."min_words" >= 0 AND "offers"."max_words" >= "offers"."min_words"),
	CONSTRAINT "offers_turnaround" CHECK ("offers"."turnaround_days" > 0)
);
--> statement-breakpoint
CREATE TABLE "outlet_prices" (
	"outlet_id" integer NOT NULL,
	"format" text NOT NULL,
	"min_price" bigint NOT NULL,
	CONSTRAINT "outlet_prices_outlet_id_format_pk" PRIMARY KEY("outlet_id","format")
);
--> statement-breakpoint
ALTER TABLE "outlets" ADD CONSTRAINT "outlets_publisher_id_publishers_id_fk" FOREIGN KEY ("publisher_id") REFERENCES "public"."publishers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_outlet_id_outlets_id_fk" FOREIGN KEY ("outlet_id") REFERENCES "public"."outlets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outlet_prices" ADD CONSTRAINT "outlet_prices_outlet_id_outlets_id_fk" FOREIGN KEY ("outlet_id") REFERENCES "public"."outlets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "outlets_publisher_idx" ON "outlets" USING btree ("publisher_id");--> statement-breakpoint
CREATE INDEX "outlets_search_idx" ON "outlets" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "outlets_name_trgm_idx" ON "outlets" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "outlets_domain_trgm_idx" ON "outlets" USING gin ("domain" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "outlets_topics_idx" ON "outlets" USING gin ("topics");--> statement-breakpoint
CREATE INDEX "outlets_traffic_idx" ON "outlets" USING btree ("monthly_visits" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "outlets_country_traffic_idx" ON "outlets" USING btree ("country","monthly_visits" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "outlets_type_traffic_idx" ON "outlets" USING btree ("type","monthly_visits" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "outlets_verified_traffic_idx" ON "outlets" USING btree ("traffic_verified","monthly_visits" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "offers_outlet_idx" ON "offers" USING btree ("outlet_id");--> statement-breakpoint
CREATE INDEX "outlet_prices_format_price_idx" ON "outlet_prices" USING btree ("format","min_price","outlet_id");