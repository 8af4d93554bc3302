DROP INDEX "outlets_country_traffic_idx";--> statement-breakpoint
DROP INDEX "outlets_type_traffic_idx";--> statement-breakpoint
DROP INDEX "outlets_language_traffic_idx";--> statement-breakpoint
DROP INDEX "outlets_verified_traffic_idx";--> statement-breakpoint
CREATE INDEX "outlets_country_traffic_idx" ON "outlets" USING btree ("country","monthly_visits" DESC NULLS LAST,"id" DESC NULLS LAST,"min_price_any");--> statement-breakpoint
CREATE INDEX "outlets_type_traffic_idx" ON "outlets" USING btree ("type","monthly_visits" DESC NULLS LAST,"id" DESC NULLS LAST,"min_price_any");--> statement-breakpoint
CREATE INDEX "outlets_language_traffic_idx" ON "outlets" USING btree ("language","monthly_visits" DESC NULLS LAST,"id" DESC NULLS LAST,"min_price_any");--> statement-breakpoint
CREATE INDEX "outlets_verified_traffic_idx" ON "outlets" USING btree ("traffic_verified","monthly_visits" DESC NULLS LAST,"id" DESC NULLS LAST,"min_price_any");