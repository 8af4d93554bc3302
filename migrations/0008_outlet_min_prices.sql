ALTER TABLE "outlet_prices" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
DROP TABLE "outlet_prices" CASCADE;--> statement-breakpoint
DROP INDEX "outlets_country_traffic_idx";--> statement-breakpoint
DROP INDEX "outlets_type_traffic_idx";--> statement-breakpoint
DROP INDEX "outlets_verified_traffic_idx";--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "min_price_any" bigint;--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "min_price_guest_post" bigint;--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "min_price_sponsored_article" bigint;--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "min_price_link_insertion" bigint;--> statement-breakpoint
ALTER TABLE "outlets" ADD COLUMN "min_price_press_release" bigint;--> statement-breakpoint
CREATE INDEX "outlets_min_price_any_idx" ON "outlets" USING btree ("min_price_any","id");--> statement-breakpoint
CREATE INDEX "outlets_min_price_guest_post_idx" ON "outlets" USING btree ("min_price_guest_post","id");--> statement-breakpoint
CREATE INDEX "outlets_min_price_sponsored_article_idx" ON "outlets" USING btree ("min_price_sponsored_article","id");--> statement-breakpoint
CREATE INDEX "outlets_min_price_link_insertion_idx" ON "outlets" USING btree ("min_price_link_insertion","id");--> statement-breakpoint
CREATE INDEX "outlets_min_price_press_release_idx" ON "outlets" USING btree ("min_price_press_release","id");--> statement-breakpoint
CREATE INDEX "outlets_country_traffic_idx" ON "outlets" USING btree ("country","monthly_visits" DESC NULLS LAST,"min_price_any");--> statement-breakpoint
CREATE INDEX "outlets_type_traffic_idx" ON "outlets" USING btree ("type","monthly_visits" DESC NULLS LAST,"min_price_any");--> statement-breakpoint
CREATE INDEX "outlets_verified_traffic_idx" ON "outlets" USING btree ("traffic_verified","monthly_visits" DESC NULLS LAST,"min_price_any");