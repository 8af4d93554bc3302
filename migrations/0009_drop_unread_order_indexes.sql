DROP INDEX "orders_offer_idx";--> statement-breakpoint
DROP INDEX "orders_project_idx";--> statement-breakpoint
DROP INDEX "orders_key_idx";