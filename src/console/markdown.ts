import { articleText, linkTokens } from '../domain/orders/article-links.js';

// Articles are Markdown, shown in the console to both parties, the draft's preview included, by
// this one function. It renders a plain subset (paragraphs, headings, lists, quotes, code, rules,
// emphasis, links) in one pass over the lines, so a 200,000-character body costs linear time:
// markdown-it took 0.1–1 s on a few tens of kilobytes of "![" here (content-checks.ts dropped it
// for the same reason). Safety does not depend on the subset: every character of the input is
// escaped, the only tags are this file's own, and a link keeps its target only when it is
// http(s) or mailto. Its links are the ones the content checks count (domain/orders/article-links.ts),
// so a link the checks find is a link the reader sees.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Quotes inside quotes deeper than this are shown as text (no recursion a body could exhaust). */
const MAX_QUOTE_DEPTH = 8;

const CODE_SPAN = /`([^`]+)`/g;
// Anchored: the scheme is what the target starts with, whatever it names later (javascript:…//https://…).
const SAFE_TARGET = /^(?:https?:\/\/|mailto:)/i;

/** Emphasis on text already escaped: each run stops at the next marker, so no backtracking. */
function emphasis(escaped: string): string {
  return escaped
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/__([^_]+)__/g, '<strong>$1</strong>')
    .replace(/\*([^*]+)\*/g, '<em>$1</em>');
}

function link(text: string, target: string, image: boolean): string {
  const label = image ? `${escapeHtml(text || 'image')} (image)` : emphasis(escapeHtml(text));
  if (!SAFE_TARGET.test(target)) return label;
  return `<a href="${escapeHtml(target)}" rel="nofollow noopener noreferrer">${label}</a>`;
}

/** Text outside code spans: the article's links, and what lies between them. */
function linksRun(raw: string, definitions: Map<string, string>): string {
  let out = '';
  let at = 0;
  for (const t of linkTokens(raw, definitions)) {
    out += emphasis(escapeHtml(raw.slice(at, t.start)));
    out += link(t.text, t.url, t.form === 'image');
    at = t.end;
  }
  return out + emphasis(escapeHtml(raw.slice(at)));
}

export function renderInline(raw: string, definitions: Map<string, string> = new Map()): string {
  let out = '';
  let at = 0;
  for (const m of raw.matchAll(CODE_SPAN)) {
    out += linksRun(raw.slice(at, m.index), definitions);
    out += `<code>${escapeHtml(m[1]!)}</code>`;
    at = m.index + m[0].length;
  }
  return out + linksRun(raw.slice(at), definitions);
}

const FENCE = /^ {0,3}(```|~~~)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]|$)/;
const BULLET = /^ {0,3}[-*+][ \t]+/;
const NUMBERED = /^ {0,3}\d{1,9}[.)][ \t]+/;
const QUOTE = /^ {0,3}> ?/;
const isRule = (line: string) => line.length <= 200 && /^([-*_])\1{2,}$/.test(line.replace(/[ \t]/g, ''));
const isBlank = (line: string) => line.trim() === '';

function headingText(line: string, marker: RegExpExecArray): string {
  let text = line.slice(marker[0].length).trimEnd();
  // A closing run of #s (after a space) is not part of the heading.
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  if (end < text.length && (end === 0 || text[end - 1] === ' ' || text[end - 1] === '\t')) text = text.slice(0, end).trimEnd();
  return text;
}

function renderBlocks(lines: string[], depth: number, definitions: Map<string, string>): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!)) code.push(lines[i++]!);
      i++;
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(`<h${level}>${renderInline(headingText(line, heading), definitions)}</h${level}>`);
      i++;
      continue;
    }
    if (isRule(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_QUOTE_DEPTH) {
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) quoted.push(lines[i++]!.replace(QUOTE, ''));
      out.push(`<blockquote>${renderBlocks(quoted, depth + 1, definitions)}</blockquote>`);
      continue;
    }
    const listKind = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : null;
    if (listKind) {
      const items: string[] = [];
      while (i < lines.length && !isBlank(lines[i]!)) {
        const l = lines[i]!;
        if (listKind.test(l)) items.push(l.replace(listKind, ''));
        else if (items.length && /^[ \t]/.test(l)) items[items.length - 1] += `\n${l.trim()}`;
        else break;
        i++;
      }
      const tag = listKind === BULLET ? 'ul' : 'ol';
      out.push(`<${tag}>${items.map((it) => `<li>${renderInline(it, definitions)}</li>`).join('')}</${tag}>`);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i]!;
      if (isBlank(l) || FENCE.test(l) || HEADING.test(l) || isRule(l) || (para.length && (BULLET.test(l) || QUOTE.test(l)))) break;
      para.push(l.trim());
      i++;
    }
    out.push(`<p>${renderInline(para.join('\n'), definitions)}</p>`);
  }
  return out.join('\n');
}

/** An article's Markdown as HTML safe to put in a page as it is. */
export function renderMarkdown(source: string): string {
  // Reference definitions ([label]: url) are not shown; the links that name them are.
  const { prose, definitions } = articleText(source.replace(/\r\n?/g, '\n'));
  return renderBlocks(prose.split('\n'), 0, definitions);
}
