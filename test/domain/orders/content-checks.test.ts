import { describe, expect, it } from 'vitest';
import { analyseContent, checkContent, type CheckContext } from '../../../src/domain/orders/content-checks.js';

const ctx: CheckContext = { targetUrl: 'https://buyer.example/landing', anchorText: 'best shoes', minWords: 3, maxWords: 50, maxLinks: 2 };
const status = (body: string, over: Partial<CheckContext> = {}, title = 'A title long enough') =>
  Object.fromEntries(checkContent({ title, body }, { ...ctx, ...over }).map((c) => [c.name, c.status]));

describe('content checks', () => {
  it('stops reading HTML nested deeper than 1000 elements and fails markdown_safe, naming why', () => {
    // Unclosed elements cost the tokenizer more per tag the deeper they go: an article never nests this far.
    const body = `<a href="https://buyer.example/x">ours</a>${'<div>'.repeat(40_000)}<script>x</script>`;
    const a = analyseContent({ title: 't', body });
    expect(a.unsafe).toEqual(['elements nested deeper than 1000']);
    expect(a.links.map((l) => l.url)).toContain('https://buyer.example/x');
    expect(analyseContent({ title: 't', body: '<p>x'.repeat(5_000) + 'a<br>'.repeat(5_000) }).unsafe).toEqual([]);
  });

  it('finds markdown, autolink and HTML links with their text', () => {
    const a = analyseContent({
      title: 't',
      body: 'See [best shoes](https://buyer.example/landing "t"), <https://other.example/x> and <a class="x" href="https://third.example/">the <b>third</b> one</a>.',
    });
    expect(a.links).toEqual([
      { url: 'https://buyer.example/landing', text: 'best shoes' },
      { url: 'https://other.example/x', text: 'https://other.example/x' },
      { url: 'https://third.example/', text: 'the third one' },
    ]);
  });

  it('takes an HTML link text up to its own closing tag, and skips anchors without href', () => {
    const a = analyseContent({ title: 't', body: '<a name="top">x</a> <A HREF=https://buyer.example/landing>best <i>shoes</i></A > tail </a>' });
    expect(a.links).toEqual([{ url: 'https://buyer.example/landing', text: 'best shoes' }]);
  });

  it('finds reference links (full, collapsed, shortcut) through their definitions, the first definition winning', () => {
    const a = analyseContent({
      title: 't',
      body:
        'Read [best shoes][Shop  Page], [shop page][] and [Other]; [undefined] is text.\n\n' +
        '[shop page]: https://buyer.example/landing "The shop"\n[other]: <https://other.example/>\n[other]: https://ignored.example/',
    });
    expect(a.links).toEqual([
      { url: 'https://buyer.example/landing', text: 'best shoes' },
      { url: 'https://buyer.example/landing', text: 'shop page' },
      { url: 'https://other.example/', text: 'Other' },
    ]);
    expect(status('Buy the [best shoes][1] today, friends.\n\n[1]: https://buyer.example/landing')).toMatchObject({
      target_link: 'pass',
      anchor_text: 'pass',
    });
    expect(status('[a][1] [b][2] [c][3]\n\n[1]: https://x.example/\n[2]: https://y.example/\n[3]: https://z.example/').link_count).toBe('fail');
  });

  it('does not count images as links, and keeps balanced parentheses in a target', () => {
    const a = analyseContent({ title: 't', body: '![a photo](https://img.example/a.png) [Ada](https://en.wikipedia.org/wiki/Ada_(language)).' });
    expect(a.links).toEqual([{ url: 'https://en.wikipedia.org/wiki/Ada_(language)', text: 'Ada' }]);
    // An image's alt text counts as words, its source does not: "a photo", "Ada".
    expect(a.words).toBe(3);
  });

  it('passes a body that links the target with the anchor text, within the word and link limits', () => {
    expect(status('Buy the [best shoes](https://buyer.example/landing/) today, friends.')).toEqual({
      target_link: 'pass',
      anchor_text: 'pass',
      word_count: 'pass',
      link_count: 'pass',
      title_length: 'pass',
      markdown_safe: 'pass',
    });
  });

  it('warns on another anchor text, fails without a target link, too many links or words, a short title', () => {
    expect(status('Buy [cheap shoes](https://buyer.example/landing) now please.').anchor_text).toBe('warn');
    const bad = status('[a](https://x.example) [b](https://y.example) [c](https://z.example)', { maxWords: 2 }, 'short');
    expect(bad).toMatchObject({ target_link: 'fail', anchor_text: 'fail', word_count: 'fail', link_count: 'fail', title_length: 'fail' });
  });

  it('says one link and one word in the singular', () => {
    const details = Object.fromEntries(checkContent({ title: 'A title long enough', body: '[shoes](https://buyer.example/landing)' }, ctx).map((c) => [c.name, c.detail]));
    expect(details.link_count).toBe('1 link (at most 2).');
    expect(details.word_count).toBe('1 word; the offer asks for 3–50.');
  });

  it('counts a hyphenated word once, and list markers and rules not at all', () => {
    expect(analyseContent({ title: 't', body: 'A state-of-the-art, well-known tool.\n\n- one\n- two\n\n---\n\n1 - 2' }).words).toBe(8);
  });

  it('counts words outside code blocks, markup and link targets', () => {
    expect(analyseContent({ title: 't', body: '# Title\n```\nnot counted at all\n```\nOne <b>two</b> [three](https://x.example/four-five) — 6' }).words).toBe(5);
  });

  it('flags scripts, frames, event handlers and javascript: links', () => {
    const a = analyseContent({ title: 't', body: '<script>x</script><iframe src=x></iframe><img src=x onerror = "y"> [z](javascript:alert(1))' });
    expect(a.unsafe).toEqual(['<script>', '<iframe>', 'event-handler attribute', 'javascript: link']);
  });

  it.each([
    ['an event handler after "/"', '<img/src="x"/onerror=alert(1)>'],
    ['an event handler right after a quoted value', '<img src="x"onerror=alert(1)>'],
    ['an upper-case event handler', '<IMG SRC=x ONERROR=alert(1)>'],
  ])('flags %s', (_name, body) => {
    expect(analyseContent({ title: 't', body }).unsafe).toEqual(['event-handler attribute']);
  });

  it.each([
    ['an entity-encoded scheme in a Markdown link', '[x](javascript&#58;alert(1))'],
    ['an entity-encoded scheme in a reference definition', '[x]\n\n[x]: &#106;avascript:alert(1)'],
    ['an entity-encoded scheme in an HTML href', '<a href="&#106;avascript:alert(1)">x</a>'],
    ['a tab inside the scheme', '<a href="java\tscript:alert(1)">x</a>'],
    ['a newline and spaces around it', '<a href="\n  javascript:alert(1)">x</a>'],
    ['an autolink', '<JAVASCRIPT:alert(1)>'],
    ['a form action', '<form action="javascript:alert(1)"><button>x</button></form>'],
  ])('flags a javascript: link through %s', (_name, body) => {
    expect(analyseContent({ title: 't', body }).unsafe).toEqual(['javascript: link']);
  });

  it.each([
    ['a meta refresh to javascript:', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', 'javascript: link'],
    ['a meta refresh with a quoted, upper-case target', `<META HTTP-EQUIV="Refresh" CONTENT="0; URL='JavaScript:alert(1)'">`, 'javascript: link'],
    ['a vbscript: Markdown link', '[x](vbscript:msgbox(1))', 'vbscript: or data: link'],
    ['a data: HTML document in an anchor', '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>', 'vbscript: or data: link'],
    ['a frame', '<frameset><frame src="https://x.example/"></frameset>', '<iframe>'],
    ['a meta refresh without url=', '<meta http-equiv="refresh" content="0;javascript:alert(1)">', 'javascript: link'],
    ['an SVG document in an object', '<object data="data:image/svg+xml,<svg onload=alert(1)>"></object>', 'vbscript: or data: link'],
    ['an SVG document in an embed', '<embed src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">', 'vbscript: or data: link'],
  ])('flags %s', (_name, body, label) => {
    expect(analyseContent({ title: 't', body }).unsafe).toEqual([label]);
  });

  it('passes a data: picture and a meta refresh to an http(s) page', () => {
    const body = '<img src="data:image/png;base64,iVBORw0KGgo="> <meta http-equiv="refresh" content="5;url=https://x.example/">';
    expect(analyseContent({ title: 't', body }).unsafe).toEqual([]);
  });

  it('passes prose and targets that only mention javascript', () => {
    const body = 'JavaScript: the good parts is a classic. See [the guide](https://x.example/javascript:intro) and <a href="https://x.example/?q=javascript:">this</a>.';
    expect(analyseContent({ title: 't', body }).unsafe).toEqual([]);
  });

  // Each of these took seconds to hours with the earlier patterns, which backtracked over the rest
  // of the body from every opening character; the test times out if one comes back.
  it.each([
    ['brackets', '['],
    ['link openings', '[a]('],
    ['angle brackets', '< '],
    ['unclosed autolinks', '<http://'],
    ['unclosed anchors', '<a '],
    ['anchors without their closing tag', '<a href=https://x.example/'],
    ['hrefs in one unclosed tag', 'href=x '],
    ['event-handler look-alikes', '< onx'],
  ])('reads a megabyte of %s in linear time', (_name, unit) => {
    const body = unit.repeat(Math.floor(1_000_000 / unit.length));
    const a = analyseContent({ title: 't', body });
    expect(a.words).toBeGreaterThanOrEqual(0);
    expect(checkContent({ title: 't', body }, ctx, a)).toHaveLength(6);
  });
});
