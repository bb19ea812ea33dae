import { BatchLineToken } from './batch-line-token';
import { SecretBox } from './secret-box';

describe('BatchLineToken', () => {
  const box = new SecretBox('11'.repeat(32));
  const claims = { keyHash: 'a'.repeat(64), batchId: 'batch_0123', customId: 'line-1' };

  it('gives back the claims of a token it signed', () => {
    expect(BatchLineToken.verify(box, BatchLineToken.sign(box, claims))).toEqual(claims);
  });

  it('refuses a token signed under another key, altered, expired or malformed', () => {
    const token = BatchLineToken.sign(box, claims);
    expect(BatchLineToken.verify(new SecretBox('22'.repeat(32)), token)).toBeNull();
    const [version, payload, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), c: 'other' })).toString('base64url');
    expect(BatchLineToken.verify(box, `${version}.${forged}.${mac}`)).toBeNull();
    expect(BatchLineToken.verify(box, BatchLineToken.sign(box, claims, Date.now() - 11 * 60_000))).toBeNull();
    for (const bad of ['', 'v1', 'v1..', `${token}.x`, `v2.${payload}.${mac}`, 'v1.%%%.%%%']) expect(BatchLineToken.verify(box, bad)).toBeNull();
  });

  it('is not a MAC for another purpose', () => {
    expect(box.mac('batch-line', 'x').equals(box.mac('other', 'x'))).toBe(false);
  });
});
