CREATE TABLE "mcp_confirmations" (
	"token_id" text PRIMARY KEY NOT NULL,
	"api_key_id" integer NOT NULL,
	"tool" text NOT NULL,
	"arguments_hash" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mcp_confirmations" ADD CONSTRAINT "mcp_confirmations_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mcp_confirmations_key_idx" ON "mcp_confirmations" USING btree ("api_key_id");