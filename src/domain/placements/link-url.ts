/**
 * Query parameters that only say where a click came from: dropped before links are compared, so
 * a tagged link still counts as the ordered one. `utm_` is a prefix (utm_source, utm_medium, …).
 */
export const TRACKING_PARAMETERS = ['utm_*', 'gclid', 'fbclid', 'msclkid', 'mc_cid', 'mc_eid', 'ref'] as const;

const isTracking = (key: string) => {
  const k = key.toLowerCase();
  return k.startsWith('utm_') || (TRACKING_PARAMETERS as readonly string[]).includes(k);
};

/**
 * What two links must share to count as the same link (docs/link-checks.md): host (lower case,
 * no trailing dot; `www.` kept, it is another host), port unless 80 or 443, path without trailing
 * slashes and with percent-escapes in upper case, and the query without tracking parameters, in
 * any order. The scheme (http ≡ https) and the fragment do not count. null for anything that is
 * not an http(s) URL, relative ones resolved against `base`.
 */
export function linkKey(url: string, base?: string): string | null {
  let u: URL;
  try {
    u = new URL(url.trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.replace(/\.$/, '');
  const port = u.port === '' || u.port === '80' || u.port === '443' ? '' : `:${u.port}`;
  const path = u.pathname.replace(/\/+$/, '').replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
  const params = [...u.searchParams].filter(([key]) => !isTracking(key));
  params.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const query = new URLSearchParams(params).toString();
  return `${host}${port}${path}${query ? `?${query}` : ''}`;
}

/** The host of an http(s) URL, lower case without a trailing dot; null for anything else. */
export function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.replace(/\.$/, '') : null;
  } catch {
    return null;
  }
}

/** Whether a host is the domain or one of its subdomains. */
export function onDomain(host: string, domain: string): boolean {
  const d = domain.toLowerCase().replace(/\.$/, '');
  return host === d || host.endsWith(`.${d}`);
}
