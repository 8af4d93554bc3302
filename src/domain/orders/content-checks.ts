import { flagScriptUrl, htmlLinks, LINK_BODY, markdownLinks, MAX_DEPTH, type Link } from './article-links.js';

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

/** What an article is checked against, from an order's (or a brief and its offer's) fields as the API names them. */
export interface ContentRules {
  target_url: string;
  anchor_text: string | null;
  min_words: number;
  max_words: number;
  max_links: number;
}

const checkContextOf = (r: ContentRules): CheckContext => ({
  targetUrl: r.target_url,
  anchorText: r.anchor_text,
  minWords: r.min_words,
  maxWords: r.max_words,
  maxLinks: r.max_links,
});

// An image (![alt](src)) is not a link; for the word count, its alt text is words and its source is not.
const LINK_OR_IMAGE = new RegExp(LINK_BODY, 'g');
const TAG = /<[^<>]*>/g;

/** A title's length the title check passes, in characters (trimmed). */
export const TITLE_LENGTH = { min: 10, max: 120 } as const;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

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
  const html = htmlLinks(content.body, unsafe);
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
    titleLength >= TITLE_LENGTH.min && titleLength <= TITLE_LENGTH.max
      ? { name: 'title_length', status: 'pass', detail: `${titleLength} characters.` }
      : { name: 'title_length', status: 'fail', detail: `${titleLength} characters; titles need ${TITLE_LENGTH.min}–${TITLE_LENGTH.max}.` },
  );
  checks.push(
    unsafe.length === 0
      ? { name: 'markdown_safe', status: 'pass', detail: 'No scripts, frames, event handlers, or javascript:, vbscript: or data: links.' }
      : { name: 'markdown_safe', status: 'fail', detail: `Contains ${unsafe.join(', ')}.` },
  );
  return checks;
}

/**
 * The checks of an article against an order's rules: what submitting it stores with the version
 * (buyer's content or publisher's draft), and what the console's preview shows before that.
 */
export function checksAgainst(rules: ContentRules, content: { title: string; body: string }): ContentCheck[] {
  return checkContent(content, checkContextOf(rules));
}
