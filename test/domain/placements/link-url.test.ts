import { describe, expect, it } from 'vitest';
import { linkKey, onDomain } from '../../../src/domain/placements/link-url.js';

describe('linkKey: when two links are the same link', () => {
  const same = (a: string, b: string) => expect(linkKey(a), `${a} ≡ ${b}`).toBe(linkKey(b));
  const differ = (a: string, b: string) => expect(linkKey(a), `${a} ≠ ${b}`).not.toBe(linkKey(b));

  it('ignores scheme, host case, default ports, trailing slashes and fragments', () => {
    same('https://buyer.example/shoes', 'http://buyer.example/shoes');
    same('https://buyer.example/shoes', 'https://BUYER.Example./shoes/');
    same('https://buyer.example/shoes', 'https://buyer.example:443/shoes#reviews');
    same('http://buyer.example:80/', 'https://buyer.example');
    same('https://buyer.example/a%2fb', 'https://buyer.example/a%2Fb');
  });

  it('drops tracking parameters and ignores the order of the others', () => {
    same('https://buyer.example/p?id=7&color=red', 'https://buyer.example/p?color=red&id=7');
    same('https://buyer.example/p?id=7', 'https://buyer.example/p?utm_source=blog&id=7&UTM_Medium=x&gclid=1&fbclid=2&msclkid=3&mc_cid=4&mc_eid=5&ref=outlet');
    same('https://buyer.example/p?q=a b', 'https://buyer.example/p?q=a+b');
    same('https://buyer.example/p?utm_campaign=x', 'https://buyer.example/p');
  });

  it('keeps what makes another page: www., other ports, paths, parameters and their values', () => {
    differ('https://buyer.example/', 'https://www.buyer.example/');
    differ('https://buyer.example/', 'https://buyer.example:8443/');
    differ('https://buyer.example/shoes', 'https://buyer.example/Shoes');
    differ('https://buyer.example/p?id=7', 'https://buyer.example/p?id=8');
    differ('https://buyer.example/p?id=7', 'https://buyer.example/p');
    differ('https://buyer.example/p?reference=1', 'https://buyer.example/p');
  });

  it('resolves relative links against a base and refuses what is not http(s)', () => {
    expect(linkKey('/shoes?a=1', 'https://buyer.example/blog/')).toBe('buyer.example/shoes?a=1');
    expect(linkKey('shoes', 'https://buyer.example/blog/')).toBe('buyer.example/blog/shoes');
    expect(linkKey('mailto:me@buyer.example')).toBeNull();
    expect(linkKey('javascript:void(0)')).toBeNull();
    expect(linkKey('not a url')).toBeNull();
  });
});

describe('onDomain', () => {
  it('takes the domain and its subdomains only', () => {
    expect(onDomain('outlet.example', 'outlet.example')).toBe(true);
    expect(onDomain('blog.outlet.example', 'Outlet.Example')).toBe(true);
    expect(onDomain('xoutlet.example', 'outlet.example')).toBe(false);
    expect(onDomain('outlet.example.evil.com', 'outlet.example')).toBe(false);
  });
});
