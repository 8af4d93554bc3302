-- OAuth client secrets are stored as their SHA-256 ("sha256:" and base64url, as the server's
-- store writes them): the server only compares them. Secrets stored as sent before are hashed
-- here; a secret already hashed is left as it is, so running this again changes nothing.
UPDATE "oauth_records"
   SET "payload" = jsonb_set("payload", '{client_secret}',
         to_jsonb('sha256:' || rtrim(translate(encode(sha256(convert_to("payload"->>'client_secret', 'UTF8')), 'base64'), '+/', '-_'), '=')))
 WHERE "model" = 'Client' AND jsonb_typeof("payload"->'client_secret') = 'string' AND "payload"->>'client_secret' NOT LIKE 'sha256:%';
