import { randomBytes } from 'node:crypto';
import { maskSecret, SecretBox } from './secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32).toString('hex'));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.encrypt('sk-live-abcdef123456');
    expect(sealed).not.toContain('sk-live');
    expect(SecretBox.isSealed(sealed)).toBe(true);
    expect(box.decrypt(sealed)).toBe('sk-live-abcdef123456');
    expect(box.encrypt('same')).not.toBe(box.encrypt('same')); // fresh IV each time
  });

  it('rejects tampered ciphertext and a different key', () => {
    const sealed = box.encrypt('secret');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other!').toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32).toString('base64')).decrypt(sealed)).toThrow();
  });

  it('accepts hex or base64 keys of 32 bytes only', () => {
    expect(() => new SecretBox(randomBytes(16).toString('hex'))).toThrow('32 bytes');
    expect(() => new SecretBox(randomBytes(32).toString('base64'))).not.toThrow();
  });

  it('masks to a hint', () => {
    expect(maskSecret('sk-proj-1234567890abcd')).toBe('sk-…abcd');
    expect(maskSecret('short')).toBe('…');
  });
});
