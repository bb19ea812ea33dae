import { maskSecret, SecretBox, UndecryptableSecretError } from '../../common/crypto/secret-box';

/** The hint of a stored value; one this instance cannot decrypt (another GATEWAY_ENCRYPTION_KEY) shows as `…` rather than failing the read. */
function hintOf(sealed: string, box: SecretBox): string {
  try {
    return maskSecret(box.decrypt(sealed));
  } catch (error) {
    if (error instanceof UndecryptableSecretError) return maskSecret('');
    throw error;
  }
}

/**
 * An MCP server's headers as stored: every value encrypted (they are credentials, most often
 * `Authorization`). A value sent back as the masked hint a read showed for the same header
 * (names compared as HTTP does, case aside) keeps the stored secret, so that a client may
 * PATCH the headers it read without erasing credentials it never saw.
 */
export function sealHeaders(headers: Record<string, string>, box: SecretBox, previous: Record<string, string> = {}): Record<string, string> {
  const stored = new Map(Object.entries(previous).map(([name, sealed]) => [name.toLowerCase(), sealed]));
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      const kept = stored.get(name.toLowerCase());
      return [name, kept !== undefined && value === hintOf(kept, box) ? kept : box.encrypt(value)];
    }),
  );
}

/** Headers to send, decrypted: for the registry's in-memory targets only. */
export function openHeaders(headers: Record<string, string>, box: SecretBox): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, sealed]) => [name, box.decrypt(sealed)]));
}

/** For admin reads: a hint of each value (as `key_hint` is of a virtual key's `key`), never the value. */
export function maskHeaders(headers: Record<string, string>, box: SecretBox): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, sealed]) => [name, hintOf(sealed, box)]));
}
