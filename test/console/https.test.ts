import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { outboxLink } from '../helpers/mail.js';
import { consoleClient } from './helpers.js';

// Behind https (PUBLIC_BASE_URL), the session cookie is Secure and the headers say https.
const h = await setupApp({ SIGNUP: 'open', PUBLIC_BASE_URL: 'https://console.example' });

describe('Console pages behind https: Secure cookie, HSTS — security', () => {
  it('sets a Secure session cookie, HSTS, and upgrades insecure requests', async () => {
    const c = consoleClient(h);
    const res = await c.post('/app/sign-up', { name: 'Sec Ure', email: 'secure@example.com', password: 'correct horse battery' });
    expect(res.statusCode).toBe(303);
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(cookies.find((l) => l.startsWith('mk_session='))).toMatch(/; Secure/);
    const page = await consoleClient(h).get('/app/sign-in');
    expect(([] as string[]).concat(page.headers['set-cookie'] ?? []).find((l) => l.startsWith('_csrf='))).toMatch(/; Secure/);
    expect(page.headers['strict-transport-security']).toMatch(/max-age=/);
    expect(page.headers['content-security-policy']).toMatch(/upgrade-insecure-requests/);
    // Through the confirmation link the sign-up mailed (the console waits for it), to the workspace.
    const link = await outboxLink(h.database.pool, 'secure@example.com', 'verify_email');
    expect(link).toMatch(/^\/app\/verify-email\?token=/);
    await c.post('/app/verify-email', { token: new URLSearchParams(link.split('?')[1]).get('token')! }, { from: link });
    const home = (await c.get('/app')).headers.location!;
    const created = await c.post(`${home}/settings/api-keys`, { name: 'Key' });
    expect(created.body).toContain('curl -s https://console.example/api/v1/me');
  });
});
