// The one shape of every mail: a greeting, a few paragraphs, a list of links (a digest), at most
// one link to act on, a closing note, a notification's small print; written as a text part and an
// HTML part from the same words. Plain string building rather than the console's template
// engine: the domain writes the words of what it sends (it knows when a link is single-use or
// expires), and a dozen lines of escaping keep every value inert in HTML.

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

export interface MailContent {
  subject: string;
  greeting: string;
  paragraphs: string[];
  /** The button (HTML) and the line with the address (text). */
  action?: { label: string; url: string };
  /** Lines that each link somewhere (a daily digest's notifications): a list in HTML, a line and its address in text. */
  items?: Array<{ text: string; url: string }>;
  /** After the link: why the mail came, what to do if it was not asked for. */
  after?: string[];
  /**
   * Below the signature, in small print: why this mail came and the links that change it (a
   * notification's settings page, its one-click unsubscribe).
   */
  footer?: { text: string; links: Array<{ label: string; url: string }> };
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** A subject is one header line: no line breaks (they would start another header), at most 200 characters. */
const oneLine = (value: string) => value.replace(/[\r\n\u2028\u2029]+/g, ' ').trim().slice(0, 200);

const SIGNATURE = 'Marketplace console';

export function composeMail(content: MailContent): ComposedMail {
  const after = content.after ?? [];
  const items = content.items ?? [];
  const footer = content.footer;
  const text = [
    content.greeting,
    ...content.paragraphs,
    ...(items.length ? [items.map((i) => `- ${i.text}\n  ${i.url}`).join('\n')] : []),
    ...(content.action ? [`${content.action.label}:\n${content.action.url}`] : []),
    ...after,
    `-- \n${SIGNATURE}`,
    ...(footer ? [[footer.text, ...footer.links.map((l) => `${l.label}: ${l.url}`)].join('\n')] : []),
  ].join('\n\n');
  const p = (value: string) => `<p style="margin:0 0 16px">${escapeHtml(value)}</p>`;
  const action = content.action
    ? `<p style="margin:0 0 16px"><a href="${escapeHtml(content.action.url)}" style="display:inline-block;padding:10px 16px;background:#1f4fd1;color:#ffffff;text-decoration:none;border-radius:4px">${escapeHtml(content.action.label)}</a></p>` +
      `<p style="margin:0 0 16px;font-size:13px;color:#555555">Or open this address: ${escapeHtml(content.action.url)}</p>`
    : '';
  const list = items.length
    ? `<ul style="margin:0 0 16px;padding-left:20px">${items.map((i) => `<li style="margin:0 0 8px"><a href="${escapeHtml(i.url)}">${escapeHtml(i.text)}</a></li>`).join('')}</ul>`
    : '';
  const small = footer
    ? `<p style="margin:16px 0 0;font-size:12px;color:#555555">${escapeHtml(footer.text)}${footer.links
        .map((l) => `<br><a href="${escapeHtml(l.url)}" style="color:#555555">${escapeHtml(l.label)}</a>`)
        .join('')}</p>`
    : '';
  const html = [
    '<!doctype html>',
    `<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(oneLine(content.subject))}</title></head>`,
    '<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a">',
    p(content.greeting),
    ...content.paragraphs.map(p),
    list,
    action,
    ...after.map(p),
    `<p style="margin:24px 0 0;font-size:13px;color:#555555">${escapeHtml(SIGNATURE)}</p>`,
    small,
    '</body></html>',
  ].join('\n');
  return { subject: oneLine(content.subject), text, html };
}
