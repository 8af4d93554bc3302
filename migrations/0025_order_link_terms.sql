-- The link as bought, frozen on the order like its content terms: the offer's terms may change later.
ALTER TABLE "orders" ADD COLUMN "link_type" "link_type";--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "sponsored_label" boolean;--> statement-breakpoint
UPDATE "orders" o SET "link_type" = f."link_type", "sponsored_label" = f."sponsored_label" FROM "offers" f WHERE f."id" = o."offer_id";--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "link_type" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "sponsored_label" SET NOT NULL;--> statement-breakpoint
-- Placements already awaiting review when link checks arrived are checked at once, not sent back
-- at their review deadline for want of a check.
UPDATE "orders" SET "link_check_due_at" = now() WHERE "status" = 'live_review' AND "link_check_due_at" IS NULL;
