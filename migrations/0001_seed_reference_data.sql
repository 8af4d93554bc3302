-- Custom SQL migration file, put your code below! --
-- Fixed starting FX table (contract section 10); `fx set` updates it.
INSERT INTO "fx_rates" ("currency", "per_usd") VALUES
  ('USD', 1), ('EUR', 0.92), ('GBP', 0.79), ('CAD', 1.36), ('AUD', 1.52),
  ('JPY', 149.50), ('CHF', 0.88), ('SEK', 10.50), ('PLN', 3.98), ('INR', 83.20)
ON CONFLICT ("currency") DO NOTHING;
--> statement-breakpoint
-- The platform's two accounts exist exactly once.
INSERT INTO "ledger_accounts" ("kind") VALUES ('fees'), ('external')
ON CONFLICT ON CONSTRAINT "ledger_accounts_owner_uq" DO NOTHING;
