import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/console/markdown.js';
import { analyseContent } from '../../src/domain/orders/content-checks.js';

// The console's Markdown: what both parties see of an article, and the draft's preview. Safety is
// that no input can produce a tag or attribute of its own; the subset is checked by example.

const ALLOWED_TAGS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'hr', 'strong', 'em', 'a']);

/** Every tag in the output, with its attributes. */
function tagsOf(out: string) {
  return [...out.matchAll(/<\/?([a-zA-Z0-9]+)([^>]*)>/g)].map((m) => ({ name: m[1]!.toLowerCase(), attrs: m[2]!.trim() }));
}

function expectSafe(out: string) {
  for (const t of tagsOf(out)) {
    expect(ALLOWED_TAGS.has(t.name), `tag ${t.name}`).toBe(true);
    if (t.name === 'a' && t.attrs) expect(t.attrs).toMatch(/^href="(?:https?:\/\/|mailto:)[^"<>]*" rel="nofollow noopener noreferrer"$/);
    else expect(t.attrs, `attributes of ${t.name}`).toBe('');
  }
  // Nothing outside a tag opens one: every < that is not ours was escaped.
  expect(out.replace(/<\/?[a-z0-9]+(?: href="[^"]*" rel="[^"]*")?>/g, '')).not.toMatch(/[<>"]/);
}

describe('renderMarkdown', () => {
  it('renders the subset: headings, paragraphs, emphasis, links, lists, quotes, code, rules', () => {
    const out = renderMarkdown(
      '# Title #\n\nSome **bold**, *italic* and `code <b>`.\nSame paragraph.\n\n- one\n- two [link](https://example.com/a_(b) "t")\n\n1. first\n2. second\n\n> quoted\n> more\n\n```\n<raw> & code\n```\n\n---\n\n<https://example.com/auto>',
    );
    expect(out).toBe(
      [
        '<h1>Title</h1>',
        '<p>Some <strong>bold</strong>, <em>italic</em> and <code>code &lt;b&gt;</code>.\nSame paragraph.</p>',
        '<ul><li>one</li><li>two <a href="https://example.com/a_(b)" rel="nofollow noopener noreferrer">link</a></li></ul>',
        '<ol><li>first</li><li>second</li></ol>',
        '<blockquote><p>quoted\nmore</p></blockquote>',
        '<pre><code>&lt;raw&gt; &amp; code</code></pre>',
        '<hr>',
        '<p><a href="https://example.com/auto" rel="nofollow noopener noreferrer">https://example.com/auto</a></p>',
      ].join('\n'),
    );
  });

  it('renders a reference link as a link, as the checks count it (issue: [text][1] passed the check, the preview showed brackets)', () => {
    const body = 'Buy the [best shoes][1] today.\n\n[1]: https://buyer.example/landing';
    expect(analyseContent({ title: 't', body }).links).toEqual([{ url: 'https://buyer.example/landing', text: 'best shoes' }]);
    expect(renderMarkdown(body)).toBe('<p>Buy the <a href="https://buyer.example/landing" rel="nofollow noopener noreferrer">best shoes</a> today.</p>');
  });

  it('renders as links exactly the links the content checks count, in each form', () => {
    const forms = [
      'inline [one](https://a.example/1 "title")',
      'with parentheses [two](https://a.example/2_(x))',
      'autolink <https://a.example/3>',
      'full reference [four][Ref  Four]',
      'collapsed reference [five][]',
      'shortcut reference [six]',
      'numbered reference [seven][7]',
      'HTML <a class="x" href="https://a.example/8">eight &amp; more</a>',
      'HTML unquoted <A HREF=https://a.example/9>nine</A>',
    ];
    const definitions = '[ref four]: https://a.example/4\n[five]: <https://a.example/5>\n[Six]: https://a.example/6 "Six"\n[7]: https://a.example/7';
    const body = `${forms.join('\n\n')}\n\n${definitions}`;
    const counted = analyseContent({ title: 't', body }).links;
    const rendered = renderMarkdown(body);
    const shown = [...rendered.matchAll(/<a href="([^"]*)" rel="nofollow noopener noreferrer">([^<]*)<\/a>/g)].map((m) => ({
      url: m[1]!,
      text: m[2]!.replace(/&amp;/g, '&'),
    }));
    expect(counted).toHaveLength(forms.length);
    const byUrl = (a: { url: string }, b: { url: string }) => a.url.localeCompare(b.url);
    expect(shown.sort(byUrl)).toEqual([...counted].sort(byUrl));
    // The definitions are not shown, and no bracket is left over.
    expect(rendered).not.toMatch(/[[\]]|a\.example\/\d<\/p>/);
    expectSafe(rendered);
  });

  it('escapes HTML and keeps a link target only when it is http(s) or mailto', () => {
    const out = renderMarkdown(
      '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,<x>) [d](vbscript:x) [e](mailto:a@b.example)\n\n![pic](https://img.example/p.png) ![x](javascript:alert(1))\n\n[q](https://x.example/"onmouseover="alert(1))',
    );
    expectSafe(out);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).not.toContain('javascript:alert');
    expect(out).toContain('<a href="mailto:a@b.example" rel="nofollow noopener noreferrer">e</a>');
    expect(out).toContain('<a href="https://img.example/p.png" rel="nofollow noopener noreferrer">pic (image)</a>');
  });

  it('judges a link target by its start: an allowed scheme later in it does not make it safe', () => {
    // Each target names https:// or mailto: somewhere after a scheme that runs script or loads a document.
    const hostile = [
      '[x](javascript:alert(1)//https://x.example/)',
      '[x](JAVASCRIPT:alert(1)//mailto:a@b.example)',
      '[x](data:text/html,x//https://x.example/)',
      '![x](javascript:alert(1)//https://x.example/p.png)',
      '[x]( javascript:alert(1)//https://x.example/)',
    ];
    for (const body of hostile) {
      const out = renderMarkdown(body);
      expectSafe(out);
      expect(out, body).not.toContain('<a ');
      expect(out, body).not.toMatch(/javascript:|data:/i);
    }
  });

  it('never lets any input make a tag or attribute of its own', () => {
    const pieces = fc.constantFrom('<', '>', '"', "'", '&', '[', ']', '(', ')', '!', '*', '_', '`', '#', '-', '>', ' ', '\n', 'javascript:', 'https://x.example/', 'a', 'on', '=');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 200 }), (parts) => {
        expectSafe(renderMarkdown(parts.join('')));
      }),
      { numRuns: 500 },
    );
  });

  it('takes the largest body the API accepts, of the inputs that make parsers backtrack, and quotes nested past any limit', () => {
    for (const unit of ['![', '[', '*a', '`', '> ', '[a](', '<https://', '_', '**', '# ', '- ']) {
      const body = unit.repeat(Math.floor(200_000 / unit.length));
      const out = renderMarkdown(body);
      expect(out.length).toBeGreaterThan(0);
      expectSafe(out);
    }
    expect(renderMarkdown('>'.repeat(100_000))).toContain('<blockquote>');
  });
});
