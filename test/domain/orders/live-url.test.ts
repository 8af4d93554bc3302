import { describe, expect, it } from 'vitest';
import { liveUrlOn } from '../../../src/domain/orders/publisher-actions.js';

describe('liveUrlOn (publish)', () => {
  const domain = 'outlet.example';

  it('takes the domain and its subdomains, stored normalised', () => {
    expect(liveUrlOn('https://outlet.example/post', domain)).toBe('https://outlet.example/post');
    expect(liveUrlOn('http://blog.outlet.example/a?b=1#c', domain)).toBe('http://blog.outlet.example/a?b=1#c');
    expect(liveUrlOn('https://BLOG.Outlet.Example.:8443/Our-Post', domain)).toBe('https://blog.outlet.example:8443/Our-Post');
    expect(liveUrlOn('https://blog%2eoutlet.example/x', domain)).toBe('https://blog.outlet.example/x');
  });

  it('refuses other hosts, other schemes, credentials and empty labels', () => {
    for (const url of [
      'https://elsewhere.example/post',
      'https://xoutlet.example/',
      'https://outlet.example.evil.com/',
      'https://evil.com?.outlet.example',
      'https://evil.com#.outlet.example',
      'https://outlet.example@evil.com/',
      'https://evil.com@outlet.example/p',
      'https://user:pw@outlet.example/p',
      'https://@outlet.example/p',
      'https://a..outlet.example/',
      'https://.outlet.example/',
      'https://outlet.example:0/p',
      'ftp://outlet.example/file',
      'javascript:alert(1)//outlet.example',
      'not a url',
    ]) {
      expect(liveUrlOn(url, domain), url).toBeUndefined();
    }
  });
});
