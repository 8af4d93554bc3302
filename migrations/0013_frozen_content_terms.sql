-- Orders placed before this migration take their offer's current terms, the ones their checks used.
ALTER TABLE "orders" ADD COLUMN "min_words" integer;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "max_words" integer;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "max_links" integer;--> statement-breakpoint
UPDATE "orders" o SET "min_words" = f."min_words", "max_words" = f."max_words", "max_links" = f."max_links" FROM "offers" f WHERE f."id" = o."offer_id";--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "min_words" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "max_words" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "max_links" SET NOT NULL;
