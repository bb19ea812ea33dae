import type { SecretBox } from './secret-box';

/** The header a batch line's request carries instead of a gateway key (see BatchLineToken). */
export const BATCH_LINE_HEADER = 'x-gateway-batch-line';

/** What a batch line's token says: the API key that created the batch (its secret's hash), the batch and the line. */
export interface BatchLineClaims {
  keyHash: string;
  batchId: string;
  customId: string;
}

const PURPOSE = 'batch-line';
/** A token is good for this long: a line is sent at once, so a token seen later is refused. */
const LIFETIME_MS = 10 * 60_000;

/**
 * The credential of a batch line the gateway sends to itself (the batch runner): the
 * gateway never keeps a key's secret, so a line authenticates as the key that created the
 * batch with a token MACed under GATEWAY_ENCRYPTION_KEY. Only the gateway can make one; it
 * expires after ten minutes. Format: `v1.<claims, base64url JSON>.<MAC, base64url>`.
 */
export const BatchLineToken = {
  sign(box: SecretBox, claims: BatchLineClaims, now = Date.now()): string {
    const payload = Buffer.from(JSON.stringify({ k: claims.keyHash, b: claims.batchId, c: claims.customId, e: now + LIFETIME_MS })).toString('base64url');
    return `v1.${payload}.${box.mac(PURPOSE, payload).toString('base64url')}`;
  },

  /** The claims of a good token; null for anything else (forged, altered, expired, malformed). */
  verify(box: SecretBox, token: string, now = Date.now()): BatchLineClaims | null {
    const [version, payload, mac, extra] = token.split('.');
    if (version !== 'v1' || !payload || !mac || extra !== undefined || token.length > 4096) return null;
    if (!box.verifyMac(PURPOSE, payload, Buffer.from(mac, 'base64url'))) return null;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      const { k, b, c, e } = claims;
      if (typeof k !== 'string' || typeof b !== 'string' || typeof c !== 'string' || typeof e !== 'number' || e < now) return null;
      return { keyHash: k, batchId: b, customId: c };
    } catch {
      return null;
    }
  },
};
