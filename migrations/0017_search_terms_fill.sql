-- Typo tolerance reads search_terms (the lexemes of outlets.search_vector made of letters only:
-- words, not numbers or domain labels with hyphens) and measures edit distance with
-- fuzzystrmatch. A statement trigger adds the terms of the rows an INSERT or UPDATE wrote, in the
-- same transaction, so an import's words are searchable when it commits.
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION outlets_collect_search_terms() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_terms (term)
  SELECT DISTINCT t.term FROM written w, unnest(tsvector_to_array(w.search_vector)) AS t(term)
   WHERE t.term ~ '^[[:alpha:]]+$'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER outlets_search_terms_insert AFTER INSERT ON outlets
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION outlets_collect_search_terms();
--> statement-breakpoint
CREATE TRIGGER outlets_search_terms_update AFTER UPDATE ON outlets
  REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION outlets_collect_search_terms();
--> statement-breakpoint
INSERT INTO search_terms (term)
SELECT DISTINCT t.term FROM outlets o, unnest(tsvector_to_array(o.search_vector)) AS t(term)
 WHERE t.term ~ '^[[:alpha:]]+$'
ON CONFLICT DO NOTHING;
