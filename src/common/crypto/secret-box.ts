import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';

/** A stored secret this key cannot open: it was sealed with another GATEWAY_ENCRYPTION_KEY, or altered. */
export class UndecryptableSecretError extends Error {}

/**
 * AES-256-GCM for provider credentials at rest. Format: `v1.<iv>.<tag>.<ciphertext>`
 * (base64url parts), so a later key rotation can tell versions apart.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: string) {
    this.key = /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64');
    if (this.key.length !== 32) throw new Error('The encryption key must be 32 bytes');
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || data === undefined) throw new UndecryptableSecretError('Not a sealed secret');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new UndecryptableSecretError('The secret was sealed with another encryption key, or altered');
    }
  }

  /**
   * An HMAC-SHA256 of `data` under a key derived from this one for `purpose` (HKDF), so that
   * a token signed for one purpose proves nothing for another, and the same on every
   * instance that shares GATEWAY_ENCRYPTION_KEY.
   */
  mac(purpose: string, data: string): Buffer {
    let key = this.macKeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `ai-gateway ${purpose}`, 32));
      this.macKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(data).digest();
  }

  /** Whether `mac` is `data`'s MAC for `purpose` (compared in constant time). */
  verifyMac(purpose: string, data: string, mac: Buffer): boolean {
    const expected = this.mac(purpose, data);
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  }

  private readonly macKeys = new Map<string, Buffer>();

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(`${VERSION}.`) && value.split('.').length === 4;
  }
}

/** A hint to tell secrets apart without revealing them: `sk-…a1b2`. */
export function maskSecret(secret: string): string {
  if (secret.length <= 8) return '…';
  return `${secret.slice(0, 3)}…${secret.slice(-4)}`;
}

/** Whether `value` has the shape of `maskSecret`'s output: a hint an admin read showed and a PATCH may send back. */
export function isSecretHint(value: string): boolean {
  return value === '…' || (value.length === 8 && value[3] === '…');
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
