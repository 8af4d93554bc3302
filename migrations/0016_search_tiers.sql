CREATE TABLE "search_terms" (
	"term" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "name_vector" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', "outlets"."name") || to_tsvector('english', "outlets"."name")
          || to_tsvector('simple', replace("outlets"."domain", '.', ' '))) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "search_terms_length_idx" ON "search_terms" USING btree (length("term"),"term");--> statement-breakpoint
CREATE INDEX "outlets_name_vector_idx" ON "outlets" USING gin ("name_vector");--> statement-breakpoint
CREATE INDEX "outlets_lower_name_idx" ON "outlets" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "outlets_language_traffic_idx" ON "outlets" USING btree ("language","monthly_visits" DESC NULLS LAST,"min_price_any");