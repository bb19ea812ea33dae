import { maskSecret, SecretBox } from '../../common/crypto/secret-box';

/** Fields inside a gateway config that hold provider credentials. */
const SECRET_FIELDS = new Set(['api_key']);

/**
 * Applies `map` to every secret of a config: provider `api_key`s, and every value of a
 * `headers` object (a guardrail webhook's `Authorization`, as for MCP tool headers).
 */
function mapSecrets(value: unknown, map: (secret: string) => string, inHeaders = false): unknown {
  if (Array.isArray(value)) return value.map((item) => mapSecrets(item, map));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      (inHeaders || SECRET_FIELDS.has(key)) && typeof inner === 'string' ? map(inner) : mapSecrets(inner, map, key === 'headers' && !Array.isArray(inner)),
    ]),
  );
}

export function encryptConfigSecrets(config: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  return mapSecrets(config, (secret) => (SecretBox.isSealed(secret) ? secret : box.encrypt(secret))) as Record<string, unknown>;
}

export function decryptConfigSecrets(config: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  return mapSecrets(config, (sealed) => (SecretBox.isSealed(sealed) ? box.decrypt(sealed) : sealed)) as Record<string, unknown>;
}

/** For admin reads: a hint of each stored credential, never the credential. */
export function maskConfigSecrets(config: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  return mapSecrets(config, (sealed) => maskSecret(SecretBox.isSealed(sealed) ? box.decrypt(sealed) : sealed)) as Record<string, unknown>;
}
