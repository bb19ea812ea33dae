import { randomBytes } from 'node:crypto';
import { clearCookie, cookieOf, CookieSigner, setCookie } from './cookies';

describe('session cookies', () => {
  const key = randomBytes(32).toString('hex');

  it('verifies what it signed, and nothing altered or signed with another key', () => {
    const signer = new CookieSigner(key);
    const signed = signer.sign('token-abc');
    expect(signer.verify(signed)).toBe('token-abc');
    expect(new CookieSigner(key).verify(signed)).toBe('token-abc'); // another instance, same key
    expect(signer.verify(signed.replace('token-abc', 'token-abd'))).toBeNull();
    expect(signer.verify(`${signed.slice(0, -1)}${signed.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(signer.verify('no-dot')).toBeNull();
    expect(signer.verify('.only-mac')).toBeNull();
    expect(new CookieSigner(randomBytes(32).toString('base64')).verify(signed)).toBeNull();
  });

  it('derives a CSRF token per session that is not the session token', () => {
    const signer = new CookieSigner(key);
    expect(signer.csrfToken('a')).toBe(signer.csrfToken('a'));
    expect(signer.csrfToken('a')).not.toBe(signer.csrfToken('b'));
    expect(signer.sign('a')).not.toContain(signer.csrfToken('a'));
  });

  it('reads one cookie of a Cookie header and writes HttpOnly, SameSite=Lax cookies (Secure over https)', () => {
    expect(cookieOf('a=1; gateway_session=x%2Ey; b=2', 'gateway_session')).toBe('x.y');
    expect(cookieOf('gateway_sessionX=1', 'gateway_session')).toBeNull();
    expect(cookieOf(undefined, 'a')).toBeNull();
    expect(cookieOf('a=%E0%A4%A', 'a')).toBeNull();
    expect(setCookie('s', 'v.1', { path: '/', maxAgeSeconds: 60, secure: false })).toBe('s=v.1; Path=/; Max-Age=60; HttpOnly; SameSite=Lax');
    expect(setCookie('s', 'v', { path: '/auth', maxAgeSeconds: 1, secure: true })).toMatch(/; Secure$/);
    expect(clearCookie('s', '/', false)).toBe('s=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
  });
});
