import { Parser } from 'htmlparser2';

/** A link on the page. */
export interface PageLink {
  /** The href as written (entities decoded). */
  href: string;
  /** The href resolved against the page's <base href> or URL; null when it cannot be. */
  url: string | null;
  /** Its text, white space collapsed; an image link's alt text when it has no text. */
  text: string;
  /** Its rel values, lower case. */
  rel: string[];
  /** The visible text of its region: the nearest <article>, else <main>, else the whole body. */
  region(): string;
  /** Which element that region is, for messages. */
  regionName: string;
}

export interface PageScan {
  /** The page nests elements deeper than MAX_DEPTH: it was not read past that point. */
  tooDeep: boolean;
  /**
   * Why the read stopped before the end, if it did: nested too deep, more than MAX_LINKS links, or
   * over the time budget. The checks do not judge a page read in part.
   */
  stopped: 'depth' | 'links' | 'time' | null;
  links: PageLink[];
  /** The content of every <meta name="robots"> and <meta name="googlebot">. */
  robots: string[];
  /** The first <link rel="canonical">'s href, resolved like a link's; null without one. */
  canonical: string | null;
  /** The visible text of the whole page. */
  text(): string;
}

/** Elements whose text a reader does not see. */
const INVISIBLE = new Set(['head', 'script', 'style', 'noscript', 'template', 'iframe', 'object', 'svg']);
/** Elements whose content is not rendered as part of the document: links inside do not count. */
const INERT = new Set(['template', 'noscript']);
/** Elements that do not break a word: no space is put where they open or close. */
const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'font', 'i', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var']);
/**
 * Deeper than any real page (browsers stop nesting at 512). htmlparser2's work per tag grows with
 * the depth, so 2 MB of unclosed <div>s took 86 s to parse; the scan stops there instead.
 */
export const MAX_DEPTH = 1000;
/**
 * Links (`<a>` elements, with or without href) a page may have: far more than any real article (a
 * large news front page has a few thousand). Past it the read stops: 262,000 links nested 995
 * deep cost seconds of CPU.
 */
export const MAX_LINKS = 20_000;
/** How long one page's read may take, however it is built; the read stops there. */
export const SCAN_BUDGET_MS = 2_000;
/** Where a link's region may end, innermost first (a disclosure label sits at the top of its article). */
const REGIONS = ['article', 'main'];

interface Open {
  name: string;
  hidden: boolean;
  /** Inside a <template> or <noscript>: not part of the rendered document. */
  inert: boolean;
  region?: Region;
}
interface Region {
  name: string;
  start: number;
  end?: number;
}

/**
 * A rel attribute's values, lower case. Search engines accept them separated by white space or
 * commas (`rel="noopener,nofollow"` is not followed), so both separate.
 */
export const relValues = (rel: string | undefined) => (rel ?? '').toLowerCase().split(/[\s,]+/).filter(Boolean);

// aria-hidden is not here: it hides from screen readers what sighted readers still see.
const hides = (attributes: Record<string, string>) => attributes.hidden !== undefined || /display\s*:\s*none|visibility\s*:\s*hidden/i.test(attributes.style ?? '');

/**
 * A page as the checks read it, parsed as a browser tokenizes HTML (htmlparser2, entities
 * decoded): its links with their text, rel and region, and its robots meta tags.
 */
export function scanPage(html: string, pageUrl: string, budgetMs = SCAN_BUDGET_MS): PageScan {
  const until = performance.now() + budgetMs;
  let tags = 0;
  let anchors = 0;
  let stopped: PageScan['stopped'] = null;
  const stop = (why: NonNullable<PageScan['stopped']>) => {
    if (stopped !== null) return;
    stopped = why;
    parser.pause();
  };
  // Every 512 tags, the clock: cheap beside the tags themselves.
  const tick = () => {
    if ((++tags & 511) === 0 && performance.now() > until) stop('time');
  };
  const chunks: string[] = [];
  let length = 0;
  const visible = (text: string) => {
    chunks.push(text);
    length += text.length;
  };
  const stack: Open[] = [];
  const whole: Region = { name: 'page', start: 0 };
  let base: string | undefined;
  const robots: string[] = [];
  let canonical: string | undefined;
  const raw: { href: string; text: string; alt: string; rel: string[]; region: Region }[] = [];
  let link: (typeof raw)[number] | undefined; // the link being read (links do not nest)
  let linkDepth = 0;

  const innermostRegion = () => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.region && stack[i]!.region!.name !== 'body') return stack[i]!.region!;
    return stack.find((o) => o.region?.name === 'body')?.region ?? whole;
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const hidden = (stack.at(-1)?.hidden ?? false) || INVISIBLE.has(name) || hides(attributes);
        const inert = (stack.at(-1)?.inert ?? false) || INERT.has(name);
        tick();
        if (stack.length >= MAX_DEPTH) stop('depth');
        if (name === 'a' && ++anchors > MAX_LINKS) stop('links');
        const open: Open = { name, hidden, inert };
        if (!INLINE.has(name)) visible(' ');
        if (REGIONS.includes(name) || name === 'body') open.region = { name, start: length };
        stack.push(open);
        if (inert) return;
        if (name === 'base' && base === undefined && attributes.href !== undefined) base = attributes.href;
        else if (name === 'meta' && /^(robots|googlebot)$/i.test(attributes.name ?? '')) robots.push(attributes.content ?? '');
        else if (name === 'link' && canonical === undefined && attributes.href !== undefined && relValues(attributes.rel).includes('canonical')) canonical = attributes.href;
        else if (name === 'a' && attributes.href !== undefined && !link) {
          link = { href: attributes.href, text: '', alt: '', rel: relValues(attributes.rel), region: whole };
          linkDepth = stack.length;
        } else if (name === 'img' && link) link.alt += ` ${attributes.alt ?? ''}`;
      },
      ontext(text) {
        if (link && !stack.at(-1)?.inert) link.text += text;
        if (!stack.at(-1)?.hidden) visible(text);
      },
      onclosetag(name) {
        tick();
        const at = stack.findLastIndex((o) => o.name === name);
        if (at < 0) return;
        if (link && linkDepth > at) {
          link.region = innermostRegion();
          raw.push(link);
          link = undefined;
        }
        for (const closed of stack.splice(at)) if (closed.region) closed.region.end = length;
        if (!INLINE.has(name)) visible(' ');
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  if (stopped === null) parser.end();

  let text: string | undefined;
  const all = () => (text ??= chunks.join(''));
  const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
  let baseUrl = pageUrl;
  try {
    if (base !== undefined) baseUrl = new URL(base.trim(), pageUrl).href;
  } catch {
    // A <base href> that is no URL is ignored, as browsers do.
  }
  const resolve = (href: string) => {
    try {
      return new URL(href.trim(), baseUrl).href;
    } catch {
      return null;
    }
  };
  const links = raw.map((l): PageLink => {
    const url = resolve(l.href);
    const text = collapse(l.text);
    return {
      href: l.href,
      url,
      text: text || collapse(l.alt),
      rel: l.rel,
      regionName: l.region.name === 'page' || l.region.name === 'body' ? 'page' : `<${l.region.name}>`,
      region: () => collapse(all().slice(l.region.start, l.region.end ?? length)),
    };
  });
  return { tooDeep: stopped === 'depth', stopped, links, robots, canonical: canonical === undefined ? null : resolve(canonical), text: () => collapse(all()) };
}
