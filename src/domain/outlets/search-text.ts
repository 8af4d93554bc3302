// What a search box's text asks for, before any database work: the words that must all match
// (quoted ones as a phrase), the whole text as a possible exact name, and the domain it may name.

/** PostgreSQL's English stop words (snowball english.stop): alone they carry no meaning. */
export const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its ' +
    'itself they them their theirs themselves what which who whom this that these those am is are was were be been being have ' +
    'has had having do does did doing a an the and but if or because as until while of at by for with about against between ' +
    'into through during before after above below to from up down in out on off over under again further then once here there ' +
    'when where why how all any both each few more most other some such no nor not only own same so than too very s t can will ' +
    'just don should now'
  ).split(' '),
);

/** More words than this in one query are ignored (the REST and MCP schemas cap `q` at 200 characters). */
export const MAX_QUERY_WORDS = 12;
/** Longer words are not words (a pasted token, a hash): they are matched exactly, never by edit distance. */
export const MAX_WORD_LENGTH = 40;

export interface QueryWord {
  /** Lower-case letters and digits only, so nothing in it is tsquery syntax. */
  text: string;
  /** Words of one quoted phrase share a group and must appear in order, next to each other. */
  phrase: number | undefined;
}

export interface ParsedQuery {
  /** Every one must match (AND), in name, domain, topics or description. */
  words: QueryWord[];
  /** The whole text, lower-case, spaces collapsed: an outlet with exactly this name ranks first. */
  exactName: string;
  /** The domain the text names (a URL's host without `www.`), when it looks like one. */
  domain: string | undefined;
  /** The last word was typed without a space after it: it may be the start of a longer word. */
  prefixLast: boolean;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** The host of `text` when it reads as a domain or a URL (`https://www.example.com/path`). */
function domainOf(text: string): string | undefined {
  let t = text.trim().toLowerCase();
  t = t.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  t = t.replace(/[/?#].*$/, '').replace(/:\d+$/, '');
  t = t.replace(/^www\./, '');
  return /^[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)+$/u.test(t) ? t : undefined;
}

export function parseQuery(q: string): ParsedQuery {
  const text = q.normalize('NFC');
  const words: QueryWord[] = [];
  const seen = new Set<string>();
  let phrase = 0;
  // Quoted parts are phrases; an unclosed quote runs to the end.
  const parts = text.split('"');
  parts.forEach((part, i) => {
    const quoted = i % 2 === 1;
    const found = [...part.toLowerCase().matchAll(WORD)].map((m) => m[0].slice(0, MAX_WORD_LENGTH));
    if (quoted && found.length > 1) {
      phrase++;
      for (const w of found) words.push({ text: w, phrase });
      return;
    }
    for (const w of found) {
      // A lone stop word adds nothing but cost (`the` is in 40% of names); in a phrase it stays.
      if (STOP_WORDS.has(w) || seen.has(w)) continue;
      seen.add(w);
      words.push({ text: w, phrase: undefined });
    }
  });
  const trimmed = text.trim();
  const kept = words.slice(0, MAX_QUERY_WORDS);
  const lastTyped = [...trimmed.toLowerCase().matchAll(WORD)].at(-1)?.[0];
  const last = kept.at(-1);
  return {
    words: kept,
    exactName: trimmed.toLowerCase().replace(/\s+/g, ' '),
    domain: domainOf(trimmed),
    prefixLast: /[\p{L}\p{N}]$/u.test(trimmed) && last !== undefined && last.phrase === undefined && last.text === lastTyped,
  };
}
