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

// Bodies are up to 1 MB of anyone's text, checked while the workspace's balance is locked: no
// pattern below may backtrack over more than the span between two brackets. A run that may not
// contain its pattern's opening character ([^\][], [^<>], a link target without "[") ends where
// the next attempt would start, so failed attempts cost linear time, not quadratic (a body of
// 100,000 "[" took 25 s with [^\]]).
const MARKDOWN_LINK = /\[([^\][]*)\]\(\s*<?([^)\s<>[]+)>?(?:\s+"[^"]*")?\s*\)/g;
const AUTOLINK = /<(https?:\/\/[^<>\s]+)>/g;
// HTML links are found in steps, each linear: the opening tags, the href inside each, then the
// next closing tag (one regex for all three backtracks quadratically on unclosed tags).
const HTML_OPEN = /<a\s([^<>]*)>/gi;
const HTML_CLOSE = /<\/a\s*>/gi;
const HREF = /\bhref\s*=\s*["']?([^"'\s<>]+)/i;
const TAG = /<[^<>]*>/g;
const EVENT_HANDLER = /<[^<>]*\son[a-z]+\s*=/i;

interface Link {
  url: string;
  text: string;
}

function links(body: string): Link[] {
  const found: Link[] = [];
  for (const m of body.matchAll(MARKDOWN_LINK)) found.push({ url: m[2]!, text: m[1]! });
  for (const m of body.matchAll(AUTOLINK)) found.push({ url: m[1]!, text: m[1]! });
  const closes = [...body.matchAll(HTML_CLOSE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  let next = 0; // the first closing tag not yet used, in body order
  let after = 0; // where the last link ended: tags inside a link's text are its text
  for (const m of body.matchAll(HTML_OPEN)) {
    if (m.index < after) continue;
    const textStart = m.index + m[0].length;
    while (next < closes.length && closes[next]!.start < textStart) next++;
    const close = closes[next];
    if (!close) break;
    const href = HREF.exec(m[1]!);
    if (!href) continue;
    found.push({ url: href[1]!, text: body.slice(textStart, close.start).replace(TAG, '') });
    after = close.end;
  }
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
    .replace(MARKDOWN_LINK, ' $1 ')
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
  const unsafe: string[] = [];
  if (/<\s*script\b/i.test(content.body)) unsafe.push('<script>');
  if (/<\s*iframe\b/i.test(content.body)) unsafe.push('<iframe>');
  if (EVENT_HANDLER.test(content.body)) unsafe.push('event-handler attribute');
  if (/javascript\s*:/i.test(content.body)) unsafe.push('javascript: link');
  return { links: links(content.body), words: wordCount(content.body), titleLength: content.title.trim().length, unsafe };
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
  const target = normaliseUrl(ctx.targetUrl);
  const toTarget = all.filter((l) => normaliseUrl(l.url) === target);

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
      ? { name: 'word_count', status: 'pass', detail: `${words} words (${ctx.minWords}–${ctx.maxWords}).` }
      : { name: 'word_count', status: 'fail', detail: `${words} words; the offer asks for ${ctx.minWords}–${ctx.maxWords}.` },
  );
  checks.push(
    all.length <= ctx.maxLinks
      ? { name: 'link_count', status: 'pass', detail: `${all.length} links (at most ${ctx.maxLinks}).` }
      : { name: 'link_count', status: 'fail', detail: `${all.length} links; the offer allows ${ctx.maxLinks}.` },
  );
  checks.push(
    titleLength >= 10 && titleLength <= 120
      ? { name: 'title_length', status: 'pass', detail: `${titleLength} characters.` }
      : { name: 'title_length', status: 'fail', detail: `${titleLength} characters; titles need 10–120.` },
  );
  checks.push(
    unsafe.length === 0
      ? { name: 'markdown_safe', status: 'pass', detail: 'No scripts, frames, event handlers or javascript: links.' }
      : { name: 'markdown_safe', status: 'fail', detail: `Contains ${unsafe.join(', ')}.` },
  );
  return checks;
}
