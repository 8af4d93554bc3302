import type { PageFetcher, PageResult } from '../../outbound/page-fetch.js';
import { disclosureWords, findDisclosure } from './disclosure-words.js';
import { hostOf, linkKey, onDomain } from './link-url.js';
import { MAX_DEPTH, MAX_LINKS, type PageLink, SCAN_BUDGET_MS, scanPage } from './page-scan.js';

export const liveCheckNames = ['page', 'domain', 'link', 'anchor', 'rel', 'indexable', 'canonical', 'disclosure'] as const;
export type LiveCheckName = (typeof liveCheckNames)[number];
export interface LiveCheck {
  name: LiveCheckName;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
}

/** What the order promised about its published page. */
export interface PlacementExpectation {
  liveUrl: string;
  targetUrl: string;
  anchorText: string | null;
  linkType: 'dofollow' | 'nofollow';
  /** The offer promises a visible sponsored label. */
  sponsoredLabel: boolean;
  outletDomain: string;
  /** The outlet's language, ISO 639-1. */
  language: string;
}

/** rel values that tell search engines not to follow a link or pass it value. */
const NOT_FOLLOWED = ['nofollow', 'ugc', 'sponsored'];

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const sameText = (a: string, b: string) => a.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase() === b.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
const relText = (rel: string[]) => (rel.length ? `rel="${rel.join(' ')}"` : 'no rel attribute');

/**
 * The checks of a published page against its order (docs/link-checks.md). A page that could not
 * be read, or did not answer 200, gets only the failing `page` check: the others would judge an
 * error page. Otherwise every check, in a fixed order; `disclosure` only for offers that promise
 * a sponsored label.
 */
export function liveChecks(page: PageResult, expected: PlacementExpectation, budgetMs = SCAN_BUDGET_MS): LiveCheck[] {
  if (!page.ok) return [{ name: 'page', status: 'fail', detail: page.detail }];
  const via = page.redirects.length ? ` after ${plural(page.redirects.length, 'redirect')} from ${expected.liveUrl}` : '';
  if (page.status !== 200) return [{ name: 'page', status: 'fail', detail: `${page.finalUrl} answered ${page.status}, not 200${via}.` }];
  const scan = scanPage(page.body, page.finalUrl, budgetMs);
  if (scan.stopped !== null) {
    const why = {
      depth: `nests its elements more than ${MAX_DEPTH} deep`,
      links: `has more than ${MAX_LINKS.toLocaleString('en-US')} links`,
      time: `could not be read within ${budgetMs.toLocaleString('en-US')} ms`,
    }[scan.stopped];
    return [{ name: 'page', status: 'fail', detail: `${page.finalUrl} answered 200${via}, but ${why}; it was not read.` }];
  }
  const checks: LiveCheck[] = [{ name: 'page', status: 'pass', detail: `${page.finalUrl} answered 200${via}.` }];

  const host = hostOf(page.finalUrl) ?? page.finalUrl;
  checks.push(
    onDomain(host, expected.outletDomain)
      ? { name: 'domain', status: 'pass', detail: `The page is on ${host}.` }
      : { name: 'domain', status: 'fail', detail: `The page ended on ${host} (${page.finalUrl}), not on ${expected.outletDomain} or one of its subdomains.` },
  );

  const target = linkKey(expected.targetUrl);
  const matching = scan.links.filter((l) => l.url !== null && target !== null && linkKey(l.url) === target);
  const anchorOk = (l: PageLink) => expected.anchorText === null || sameText(l.text, expected.anchorText);
  const relOk = (l: PageLink) => NOT_FOLLOWED.some((r) => l.rel.includes(r)) === (expected.linkType === 'nofollow');
  // Several links to the target: the placement is judged on the best of them.
  const link = matching.find((l) => anchorOk(l) && relOk(l)) ?? matching.find(anchorOk) ?? matching.find(relOk) ?? matching[0];
  checks.push(...linkChecks(link, matching.length, scan.links, expected));

  checks.push(indexable(scan.robots, page.headersDistinct?.['x-robots-tag'] ?? [page.headers['x-robots-tag']].filter((h) => h !== undefined)));
  if (scan.canonical !== null) checks.push(canonical(scan.canonical, expected.outletDomain));
  if (expected.sponsoredLabel) checks.push(disclosure(link, scan.text, expected.language));
  return checks;
}

function linkChecks(link: PageLink | undefined, count: number, all: PageLink[], expected: PlacementExpectation): LiveCheck[] {
  if (!link) {
    const targetHost = hostOf(expected.targetUrl);
    const near = all.find((l) => l.url !== null && targetHost !== null && hostOf(l.url) === targetHost);
    const notChecked = `Not checked: there is no link to ${expected.targetUrl}.`;
    return [
      {
        name: 'link',
        status: 'fail',
        detail: `No link to ${expected.targetUrl} among the page's ${plural(all.length, 'link')}${near ? `; a link to ${targetHost} goes to ${near.url} instead` : ''}.`,
      },
      { name: 'anchor', status: 'fail', detail: notChecked },
      { name: 'rel', status: 'fail', detail: notChecked },
    ];
  }
  const several = count > 1 ? ` (${plural(count, 'link')} to it; the best is judged)` : '';
  const checks: LiveCheck[] = [{ name: 'link', status: 'pass', detail: `The page links to ${expected.targetUrl}${several}.` }];
  if (expected.anchorText === null) checks.push({ name: 'anchor', status: 'pass', detail: `No anchor text was ordered; any is accepted (the link reads "${link.text}").` });
  else if (sameText(link.text, expected.anchorText)) checks.push({ name: 'anchor', status: 'pass', detail: `The link reads "${link.text}".` });
  else checks.push({ name: 'anchor', status: 'fail', detail: `The link reads "${link.text}", not "${expected.anchorText}".` });

  const blocking = NOT_FOLLOWED.filter((r) => link.rel.includes(r));
  if (expected.linkType === 'dofollow') {
    checks.push(
      blocking.length === 0
        ? { name: 'rel', status: 'pass', detail: `The link is followed (${relText(link.rel)}).` }
        : { name: 'rel', status: 'fail', detail: `The link has ${relText(link.rel)}: ${blocking.join(', ')} makes it not followed; the offer is dofollow.` },
    );
  } else {
    checks.push(
      blocking.length > 0
        ? { name: 'rel', status: 'pass', detail: `The link is marked ${blocking.join(', ')} (${relText(link.rel)}).` }
        : { name: 'rel', status: 'fail', detail: `The link has ${relText(link.rel)}: the offer is nofollow, so it needs nofollow, ugc or sponsored.` },
    );
  }
  return checks;
}

/**
 * noindex (or none) for all crawlers or for Google's, in a robots meta tag or an X-Robots-Tag
 * header. Each header is judged on its own: a crawler's name (`bingbot:`) governs the directives
 * after it in that header only, so a plain `noindex` in another header is every crawler's.
 */
function indexable(robots: string[], headers: string[]): LiveCheck {
  const blocks = (directives: string) => directives.split(/[\s,]+/).some((d) => d.toLowerCase() === 'noindex' || d.toLowerCase() === 'none');
  const meta = robots.find(blocks);
  if (meta !== undefined) return { name: 'indexable', status: 'fail', detail: `A robots meta tag says "${meta.trim()}": search engines will not index the page.` };
  const header = headers.find(headerBlocks);
  if (header !== undefined) return { name: 'indexable', status: 'fail', detail: `The X-Robots-Tag header says "${header.trim()}": search engines will not index the page.` };
  return { name: 'indexable', status: 'pass', detail: 'No noindex in robots meta tags or the X-Robots-Tag header.' };

  // "noindex, nofollow" is every crawler's; after "somebot:" the directives that follow are that
  // crawler's alone (Google's reading); only googlebot's and everyone's count.
  function headerBlocks(value: string): boolean {
    let crawler: string | null = null;
    return value.split(',').some((part) => {
      const named = /^\s*([a-z][\w-]*)\s*:\s*(.*)$/i.exec(part);
      let directive = part;
      if (named && named[1]!.toLowerCase() !== 'unavailable_after') {
        crawler = named[1]!.toLowerCase();
        directive = named[2]!;
      }
      return (crawler === null || crawler === 'googlebot') && blocks(directive);
    });
  }
}

/** A `<link rel="canonical">` off the outlet's domain: search engines may index that page instead. */
function canonical(url: string, outletDomain: string): LiveCheck {
  const host = hostOf(url);
  if (host !== null && onDomain(host, outletDomain)) return { name: 'canonical', status: 'pass', detail: `The page's canonical URL is ${url}, on ${outletDomain}.` };
  return {
    name: 'canonical',
    status: 'warn',
    detail: `The page names ${url}, on another domain, as its canonical URL: search engines may index that page instead of this one.`,
  };
}

function disclosure(link: PageLink | undefined, pageText: () => string, language: string): LiveCheck {
  const where = link ? (link.regionName === 'page' ? 'on the page' : `in the link's ${link.regionName}`) : 'on the page';
  const found = findDisclosure(link ? link.region() : pageText(), language);
  if (found !== null) return { name: 'disclosure', status: 'pass', detail: `"${found}" appears ${where}.` };
  const examples = disclosureWords(language)
    .slice(0, 3)
    .map((w) => `"${w}"`)
    .join(', ');
  return { name: 'disclosure', status: 'warn', detail: `No sponsored label (such as ${examples}) ${where}; the offer promises one.` };
}

/** Whether a placement passed: no check failed (a warning does not fail it). */
export function livePassed(checks: readonly LiveCheck[]): boolean {
  return checks.every((c) => c.status !== 'fail');
}

export interface PlacementCheck {
  passed: boolean;
  checks: LiveCheck[];
  /** The page judged, after redirects. */
  finalUrl: string;
  /** Its status, when one arrived. */
  status: number | null;
}

/** How a placement's page is fetched and read, past what the fetcher does alone. */
export interface CheckOptions {
  /** Waits for a host's turn before each request (the checker's pacing). */
  pace?: (host: string) => Promise<void>;
  /** Reads the fetched page (the checker's worker pool); `liveChecks` on this thread without one. */
  read?: (page: PageResult, expected: PlacementExpectation) => Promise<LiveCheck[]>;
}

/** Fetches the order's live URL and checks it; never throws for anything the page does. */
export async function checkPlacement(fetcher: PageFetcher, expected: PlacementExpectation, timeoutMs: number, how: CheckOptions = {}): Promise<PlacementCheck> {
  const page = await fetcher.get(expected.liveUrl, { timeoutMs, ...(how.pace ? { pace: how.pace } : {}) });
  const checks = how.read ? await how.read(page, expected) : liveChecks(page, expected);
  return { passed: livePassed(checks), checks, finalUrl: page.finalUrl, status: page.status ?? null };
}
