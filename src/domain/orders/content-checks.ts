import { decodeHTML } from 'entities';
import { Parser } from 'htmlparser2';

export type CheckStatus = 'pass' | 'warn' | 'fail';
export interface ContentCheck {
  name: 'target_link' | 'anchor_text' | 'word_count' | 'link_count' | 'title_length' | 'markdown_safe';
  status: CheckStatus;
  detail: string;
}

export interface CheckContext {
  targetUrl: string;
  anchorText: string | null;
  minWords: number;
  maxWords: number;
  maxLinks: number;
}

// Bodies are up to 1 MB of anyone's text, a later version checked while its order is locked: no
// pattern below may backtrack over more than the span between two brackets. A run that may not
// contain its pattern's opening character ([^\][], a link target without "[") ends where the next
// attempt would start, so failed attempts cost linear time, not quadratic (a body of 100,000 "["
// took 25 s with [^\]]). A CommonMark parser (markdown-it) was tried for the Markdown side and
// dropped: a megabyte of "![" took it 5.4 s, against 0.3 s here.
// A target may hold balanced parentheses (https://en.wikipedia.org/wiki/Ada_(language)).
export const LINK_BODY = String.raw`\[([^\][]*)\]\(\s*<?((?:[^()\s<>[]|\([^()\s<>[]*\))+)>?(?:\s+"[^"]*")?\s*\)`;
// An image (![alt](src)) is not a link; for the word count, its alt text is words and its source is not.
const MARKDOWN_LINK = new RegExp(`(?<!!)${LINK_BODY}`, 'g');
const LINK_OR_IMAGE = new RegExp(LINK_BODY, 'g');
const AUTOLINK = /<((?:https?|javascript):[^<>\s]+)>/gi;
// Reference links: definitions ([label]: url), then uses ([text][label], [label][], [label]).
const REFERENCE_DEFINITION = /^ {0,3}\[([^\][]+)\]:[ \t]*(?:\n[ \t]*)?<?([^\s<>]+)>?/gm;
const FULL_REFERENCE = /(?<!!)\[([^\][]*)\]\[([^\][]*)\]/g;
const SHORTCUT_REFERENCE = /(?<![!\]])\[([^\][]+)\](?![[(:])/g;
const TAG = /<[^<>]*>/g;
/** Deeper than any article nests its elements (page scans stop at the same depth). */
const MAX_DEPTH = 1000;

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
function flagScriptUrl(url: string, unsafe: Set<string>): void {
  if (isJavascriptUrl(url)) unsafe.add('javascript: link');
  else if (isOtherScriptUrl(url)) unsafe.add('vbscript: or data: link');
}
/**
 * `<meta http-equiv="refresh" content="0; url=…">` sends the reader to its URL like a link; as
 * browsers parse it, `url=` may be left out (`content="0;javascript:…"`).
 */
const REFRESH_URL = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?['"]?([^'"]*)/i;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** CommonMark matches reference labels case-insensitively, with runs of white space as one. */
const labelKey = (label: string) => label.trim().replace(/\s+/g, ' ').toLowerCase();

interface Link {
  url: string;
  text: string;
}

function markdownLinks(body: string): Link[] {
  const definitions = new Map<string, string>();
  for (const m of body.matchAll(REFERENCE_DEFINITION)) {
    const key = labelKey(m[1]!);
    if (!definitions.has(key)) definitions.set(key, m[2]!); // the first definition wins
  }
  // A definition's <url> is its target, not an autolink.
  const prose = definitions.size ? body.replace(REFERENCE_DEFINITION, '') : body;
  const found: Link[] = [];
  for (const m of prose.matchAll(MARKDOWN_LINK)) found.push({ url: m[2]!, text: m[1]! });
  for (const m of prose.matchAll(AUTOLINK)) found.push({ url: m[1]!, text: m[1]! });
  if (definitions.size === 0) return found;
  for (const m of prose.matchAll(FULL_REFERENCE)) {
    const url = definitions.get(labelKey(m[2]! || m[1]!));
    if (url !== undefined) found.push({ url, text: m[1]! });
  }
  for (const m of prose.matchAll(SHORTCUT_REFERENCE)) {
    const url = definitions.get(labelKey(m[1]!));
    if (url !== undefined) found.push({ url, text: m[1]! });
  }
  return found;
}

/**
 * The body's HTML as a browser tokenizes it (htmlparser2): its anchors with their text, and its
 * unsafe markup, seen through entity-encoded values and the attribute syntax browsers accept
 * (`<img/src="x"/onerror=…>`, no space after a quoted value).
 */
function scanHtml(body: string, unsafe: Set<string>): Link[] {
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

function normaliseUrl(url: string): string {
  try {
    const u = new URL(url.trim());
    u.hash = '';
    return `${u.protocol}//${u.host.toLowerCase()}${u.pathname.replace(/\/+$/, '')}${u.search}`;
  } catch {
    return url.trim().replace(/\/+$/, '');
  }
}

function wordCount(body: string): number {
  const text = body
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(LINK_OR_IMAGE, ' $1 ')
    .replace(TAG, ' ')
    .replace(/[#>*_`~|[\]()]/g, ' ');
  // Hyphens stay: "state-of-the-art" is one word, as word processors count it; a list's "- " or
  // a rule's "---" is a token without letters and is not counted.
  return text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** What the checks read from a body, whatever the offer: computed once per content version. */
export interface ContentAnalysis {
  links: Link[];
  words: number;
  titleLength: number;
  unsafe: string[];
}

export function analyseContent(content: { title: string; body: string }): ContentAnalysis {
  const unsafe = new Set<string>();
  const markdown = markdownLinks(content.body);
  const html = scanHtml(content.body, unsafe);
  for (const l of markdown) flagScriptUrl(l.url, unsafe);
  const order = ['<script>', '<iframe>', 'event-handler attribute', 'javascript: link', 'vbscript: or data: link', `elements nested deeper than ${MAX_DEPTH}`];
  return {
    links: [...markdown, ...html],
    words: wordCount(content.body),
    titleLength: content.title.trim().length,
    unsafe: order.filter((u) => unsafe.has(u)),
  };
}

// The links of an analysis that point at a target, found once per target: the offers of one
// placement share the target, and only compare what was found with their own limits.
const linksByTarget = new WeakMap<ContentAnalysis, Map<string, Link[]>>();

function linksTo(analysis: ContentAnalysis, targetUrl: string): Link[] {
  const target = normaliseUrl(targetUrl);
  let found = linksByTarget.get(analysis);
  if (!found) linksByTarget.set(analysis, (found = new Map()));
  let links = found.get(target);
  if (!links) found.set(target, (links = analysis.links.filter((l) => normaliseUrl(l.url) === target)));
  return links;
}

/**
 * What the checks read from a body for one target URL: everything but the comparison with an
 * offer's limits, which is then cheap (a placement checks before it locks the balance, then
 * compares with each offer's limits under the lock).
 */
export function analyseContentFor(content: { title: string; body: string }, targetUrl: string): ContentAnalysis {
  const analysis = analyseContent(content);
  linksTo(analysis, targetUrl);
  return analysis;
}

/**
 * The checks run on every content version, buyer's or publisher's. Failing checks do not block a
 * submission; they are shown to both sides.
 */
export function checkContent(
  content: { title: string; body: string },
  ctx: CheckContext,
  analysis: ContentAnalysis = analyseContent(content),
): ContentCheck[] {
  const { links: all, words, titleLength, unsafe } = analysis;
  const toTarget = linksTo(analysis, ctx.targetUrl);

  const checks: ContentCheck[] = [
    toTarget.length > 0
      ? { name: 'target_link', status: 'pass', detail: `Links to ${ctx.targetUrl}.` }
      : { name: 'target_link', status: 'fail', detail: `No link to ${ctx.targetUrl}.` },
  ];
  if (ctx.anchorText === null) {
    checks.push({ name: 'anchor_text', status: 'pass', detail: 'No anchor text was requested.' });
  } else if (toTarget.some((l) => l.text.trim().toLowerCase() === ctx.anchorText!.trim().toLowerCase())) {
    checks.push({ name: 'anchor_text', status: 'pass', detail: `The link text is "${ctx.anchorText}".` });
  } else {
    checks.push({
      name: 'anchor_text',
      status: toTarget.length ? 'warn' : 'fail',
      detail: toTarget.length
        ? `The link text is "${toTarget[0]!.text}", not "${ctx.anchorText}".`
        : `No link with the text "${ctx.anchorText}".`,
    });
  }
  checks.push(
    words >= ctx.minWords && words <= ctx.maxWords
      ? { name: 'word_count', status: 'pass', detail: `${plural(words, 'word')} (${ctx.minWords}–${ctx.maxWords}).` }
      : { name: 'word_count', status: 'fail', detail: `${plural(words, 'word')}; the offer asks for ${ctx.minWords}–${ctx.maxWords}.` },
  );
  checks.push(
    all.length <= ctx.maxLinks
      ? { name: 'link_count', status: 'pass', detail: `${plural(all.length, 'link')} (at most ${ctx.maxLinks}).` }
      : { name: 'link_count', status: 'fail', detail: `${plural(all.length, 'link')}; the offer allows ${ctx.maxLinks}.` },
  );
  checks.push(
    titleLength >= 10 && titleLength <= 120
      ? { name: 'title_length', status: 'pass', detail: `${titleLength} characters.` }
      : { name: 'title_length', status: 'fail', detail: `${titleLength} characters; titles need 10–120.` },
  );
  checks.push(
    unsafe.length === 0
      ? { name: 'markdown_safe', status: 'pass', detail: 'No scripts, frames, event handlers, or javascript:, vbscript: or data: links.' }
      : { name: 'markdown_safe', status: 'fail', detail: `Contains ${unsafe.join(', ')}.` },
  );
  return checks;
}
