-- Workspaces created without profile pictures get the owner's Gravatar (as new ones now do), so
-- Interface B's account details always show URLs.
UPDATE "workspaces" SET "avatar_url" = 'https://www.gravatar.com/avatar/' || encode(sha256(convert_to(lower(trim("email")), 'UTF8')), 'hex') || '?d=identicon&s=200' WHERE "avatar_url" = '';--> statement-breakpoint
UPDATE "workspaces" SET "cover_url" = 'https://www.gravatar.com/avatar/' || encode(sha256(convert_to(lower(trim("email")), 'UTF8')), 'hex') || '?d=identicon&s=1200' WHERE "cover_url" = '';
