import { decodeHTML } from 'entities';
import { Parser } from 'htmlparser2';

// The links of an article, read one way: the content checks count them and the console renders
// them, so a link the checks see is a link the reader sees. Forms: inline ([text](url), and
// images, which are not links), autolinks (<https://…>), references through definitions
// ([text][label], [label][], [label] with "[label]: url") and HTML anchors (<a href>).
//
// Bodies are up to 1 MB of anyone's text, a later version checked while its order is locked: no
// pattern below may backtrack over more than the span between two brackets. A run that may not
// contain its pattern's opening character ([^\][], a link target without "[") ends where the next
// attempt would start, so failed attempts cost linear time, not quadratic (a body of 100,000 "["
// took 25 s with [^\]]). A CommonMark parser (markdown-it) was tried for the Markdown side and
// dropped: a megabyte of "![" took it 5.4 s, against 0.3 s here.
// A target may hold balanced parentheses (https://en.wikipedia.org/wiki/Ada_(language)).
export const LINK_BODY = String.raw`\[([^\][]*)\]\(\s*<?((?:[^()\s<>[]|\([^()\s<>[]*\))+)>?(?:\s+"[^"]*")?\s*\)`;
/** An inline link, or an image (![alt](src)) when it starts with "!". */
const LINK_OR_IMAGE = new RegExp(`(!?)${LINK_BODY}`, 'g');
const AUTOLINK = /<((?:https?|javascript):[^<>\s]+)>/gi;
// Reference links: definitions ([label]: url), then uses ([text][label], [label][], [label]).
const REFERENCE_DEFINITION = /^ {0,3}\[([^\][]+)\]:[ \t]*(?:\n[ \t]*)?<?([^\s<>]+)>?/gm;
const FULL_REFERENCE = /(?<!!)\[([^\][]*)\]\[([^\][]*)\]/g;
const SHORTCUT_REFERENCE = /(?<![!\]])\[([^\][]+)\](?![[(:])/g;
/** An HTML anchor with plain text, as the console can show it; the checks read all HTML with htmlparser2. */
const HTML_ANCHOR = /<a(?=[\s/>])[^<>]*>[^<]*<\/a\s*>/gi;
/** Deeper than any article nests its elements (page scans stop at the same depth). */
export const MAX_DEPTH = 1000;

export interface Link {
  url: string;
  text: string;
}

export interface LinkToken extends Link {
  form: 'inline' | 'image' | 'autolink' | 'reference' | 'html';
  /** Where the token lies in the text it was read from. */
  start: number;
  end: number;
}

/** CommonMark matches reference labels case-insensitively, with runs of white space as one. */
const labelKey = (label: string) => label.trim().replace(/\s+/g, ' ').toLowerCase();

/** A body's reference definitions (the first of a label wins), and its prose: the body without them. */
export function articleText(body: string): { prose: string; definitions: Map<string, string> } {
  const definitions = new Map<string, string>();
  for (const m of body.matchAll(REFERENCE_DEFINITION)) {
    const key = labelKey(m[1]!);
    if (!definitions.has(key)) definitions.set(key, m[2]!);
  }
  // A definition's <url> is its target, not an autolink.
  return { prose: definitions.size ? body.replace(REFERENCE_DEFINITION, '') : body, definitions };
}

/**
 * The Markdown links and images of prose, form by form: inline, autolinks, full and collapsed
 * references, shortcut references. Tokens of different forms may overlap (an autolink inside a
 * link's text); each is a link the checks count.
 */
export function markdownTokens(prose: string, definitions: Map<string, string>): LinkToken[] {
  const found: LinkToken[] = [];
  const at = (m: RegExpExecArray | RegExpMatchArray) => ({ start: m.index!, end: m.index! + m[0].length });
  for (const m of prose.matchAll(LINK_OR_IMAGE)) found.push({ form: m[1] ? 'image' : 'inline', url: m[3]!, text: m[2]!, ...at(m) });
  for (const m of prose.matchAll(AUTOLINK)) found.push({ form: 'autolink', url: m[1]!, text: m[1]!, ...at(m) });
  if (definitions.size === 0) return found;
  for (const m of prose.matchAll(FULL_REFERENCE)) {
    const url = definitions.get(labelKey(m[2]! || m[1]!));
    if (url !== undefined) found.push({ form: 'reference', url, text: m[1]!, ...at(m) });
  }
  for (const m of prose.matchAll(SHORTCUT_REFERENCE)) {
    const url = definitions.get(labelKey(m[1]!));
    if (url !== undefined) found.push({ form: 'reference', url, text: m[1]!, ...at(m) });
  }
  return found;
}

/** The Markdown links of a body (images are not links), as the checks count them. */
export function markdownLinks(body: string): Link[] {
  const { prose, definitions } = articleText(body);
  return markdownTokens(prose, definitions)
    .filter((t) => t.form !== 'image')
    .map(({ url, text }) => ({ url, text }));
}

/** Attributes whose value a browser follows or loads as a URL. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'xlink:href', 'action', 'formaction', 'data', 'poster', 'background']);

/** A link target as a browser reads its scheme: entities decoded, controls and spaces dropped. */
const schemeText = (url: string) =>
  decodeHTML(url)
    .replace(/[\u0000-\u0020]+/g, '')
    .toLowerCase();
const isJavascriptUrl = (url: string) => schemeText(url).startsWith('javascript:');
// vbscript: runs script in old Internet Explorer, and a data: document runs its own (text/html,
// and SVG, an image type, in <object> or <embed>); a raster picture is content, not a link out.
const isOtherScriptUrl = (url: string) => {
  const t = schemeText(url);
  return t.startsWith('vbscript:') || (t.startsWith('data:') && !/^data:image\/(png|jpe?g|gif|webp|avif|bmp)[;,]/.test(t));
};
/** Files a scripting or document link under its label, if it is one. */
export function flagScriptUrl(url: string, unsafe: Set<string>): void {
  if (isJavascriptUrl(url)) unsafe.add('javascript: link');
  else if (isOtherScriptUrl(url)) unsafe.add('vbscript: or data: link');
}
/**
 * `<meta http-equiv="refresh" content="0; url=…">` sends the reader to its URL like a link; as
 * browsers parse it, `url=` may be left out (`content="0;javascript:…"`).
 */
const REFRESH_URL = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?['"]?([^'"]*)/i;

/**
 * The body's HTML as a browser tokenizes it (htmlparser2): its anchors with their text, and its
 * unsafe markup, seen through entity-encoded values and the attribute syntax browsers accept
 * (`<img/src="x"/onerror=…>`, no space after a quoted value).
 */
export function htmlLinks(body: string, unsafe: Set<string>): Link[] {
  const found: Link[] = [];
  let open: Link | undefined; // the anchor whose text is being read (anchors do not nest)
  let depth = 0;
  let tooDeep = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        // htmlparser2's work per tag grows with the nesting (40,000 unclosed <div>s, a 200 KB
        // body, took 0.7 s): deeper than any article needs, the rest is not read, and flagged.
        if (++depth > MAX_DEPTH && !tooDeep) {
          tooDeep = true;
          unsafe.add(`elements nested deeper than ${MAX_DEPTH}`);
          parser.pause();
        }
        if (name === 'script') unsafe.add('<script>');
        else if (name === 'iframe' || name === 'frame' || name === 'frameset') unsafe.add('<iframe>');
        else if (name === 'meta' && attributes['http-equiv']?.toLowerCase() === 'refresh') {
          const target = REFRESH_URL.exec(attributes.content ?? '')?.[1];
          if (target !== undefined) flagScriptUrl(target, unsafe);
        }
        for (const [attribute, value] of Object.entries(attributes)) {
          if (/^on[a-z]+$/.test(attribute)) unsafe.add('event-handler attribute');
          else if (URL_ATTRIBUTES.has(attribute)) flagScriptUrl(value, unsafe);
        }
        if (name === 'a' && attributes.href !== undefined && !open) open = { url: attributes.href, text: '' };
      },
      ontext(text) {
        if (open) open.text += text;
      },
      onclosetag(name) {
        depth--;
        if (name !== 'a' || !open) return;
        found.push({ url: open.url, text: open.text.replace(/\s+/g, ' ').trim() });
        open = undefined;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(body);
  if (!tooDeep) parser.end();
  return found;
}

/**
 * The links of a run of prose as a reader sees them, in order and not overlapping (where two
 * overlap, the one that starts first, then the longer, is kept): the Markdown forms, and HTML
 * anchors whose text is plain, read by the same HTML tokenizer as the checks.
 */
export function linkTokens(prose: string, definitions: Map<string, string>): LinkToken[] {
  const all = markdownTokens(prose, definitions);
  for (const m of prose.matchAll(HTML_ANCHOR)) {
    const links = htmlLinks(m[0], new Set());
    if (links.length === 1) all.push({ form: 'html', ...links[0]!, start: m.index, end: m.index + m[0].length });
  }
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: LinkToken[] = [];
  for (const t of all) if (!kept.length || t.start >= kept[kept.length - 1]!.end) kept.push(t);
  return kept;
}
