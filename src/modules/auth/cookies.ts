import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The dashboard's session, on every path (the dashboard calls `/v1` and `/auth`). */
export const SESSION_COOKIE = 'gateway_session';
/** The sign-in in progress (state, nonce, PKCE verifier), sealed; only `/auth/callback` reads it. */
export const SIGN_IN_COOKIE = 'gateway_sign_in';
export const SIGN_IN_COOKIE_PATH = '/auth';

/** One cookie's value from a `Cookie` header, or null. */
export function cookieOf(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return null;
    }
  }
  return null;
}

export interface CookieOptions {
  maxAgeSeconds: number;
  path: string;
  secure: boolean;
}

/** A `Set-Cookie` value: HttpOnly and SameSite=Lax always (Lax: the provider's redirect back is a top-level GET that must carry it). */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearCookie(name: string, path: string, secure: boolean): string {
  return setCookie(name, '', { maxAgeSeconds: 0, path, secure });
}

/**
 * HMAC-SHA256 with a key derived from GATEWAY_ENCRYPTION_KEY (the same on every instance):
 * a session cookie is `<token>.<mac>`, so a forged one is refused without a database trip,
 * and the CSRF token of a session is derived from its token.
 */
export class CookieSigner {
  private readonly key: Buffer;

  constructor(encryptionKey: string) {
    const raw = /^[0-9a-fA-F]{64}$/.test(encryptionKey) ? Buffer.from(encryptionKey, 'hex') : Buffer.from(encryptionKey, 'base64');
    this.key = Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), 'ai-gateway dashboard session', 32));
  }

  sign(token: string): string {
    return `${token}.${this.mac('session', token)}`;
  }

  /** The token of a signed value, or null when the signature does not match. */
  verify(signed: string): string | null {
    const dot = signed.lastIndexOf('.');
    if (dot <= 0) return null;
    const token = signed.slice(0, dot);
    const given = Buffer.from(signed.slice(dot + 1));
    const expected = Buffer.from(this.mac('session', token));
    return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
  }

  /** The CSRF token of a session: a second secret bound to it, which pages read from `/auth/session` and send back in `x-csrf-token`. */
  csrfToken(token: string): string {
    return this.mac('csrf', token);
  }

  private mac(purpose: string, value: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\0${value}`).digest('base64url');
  }
}
