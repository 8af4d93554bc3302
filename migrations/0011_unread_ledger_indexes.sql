DROP INDEX "ledger_entries_transaction_idx";--> statement-breakpoint
DROP INDEX "ledger_transactions_workspace_idx";