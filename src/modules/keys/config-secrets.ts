import { maskSecret, SecretBox } from '../../common/crypto/secret-box';

/** Fields inside a gateway config that hold provider credentials. */
const SECRET_FIELDS = new Set(['api_key']);

/**
 * Applies `map` to every secret of a config: provider `api_key`s, and every value of a
 * `headers` object (a guardrail webhook's `Authorization`, as for MCP tool headers).
 */
function mapSecrets(value: unknown, map: (secret: string, stored: unknown) => string, inHeaders = false, stored?: unknown): unknown {
  if (Array.isArray(value)) return value.map((item, i) => mapSecrets(item, map, false, Array.isArray(stored) ? stored[i] : undefined));
  if (value === null || typeof value !== 'object') return value;
  const storedFields = stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      (inHeaders || SECRET_FIELDS.has(key)) && typeof inner === 'string'
        ? map(inner, storedFields[key])
        : mapSecrets(inner, map, key === 'headers' && !Array.isArray(inner), storedFields[key]),
    ]),
  );
}

/**
 * Seals the credentials of a config to store. With `stored` (an update), a credential
 * sent back as the hint an admin read shows (the config read, edited and saved whole)
 * keeps the credential stored at the same place rather than becoming the hint.
 */
export function encryptConfigSecrets(config: Record<string, unknown>, box: SecretBox, stored?: Record<string, unknown>): Record<string, unknown> {
  return mapSecrets(
    config,
    (secret, previous) => {
      if (typeof previous === 'string' && SecretBox.isSealed(previous) && secret === maskSecret(box.decrypt(previous))) return previous;
      return SecretBox.isSealed(secret) ? secret : box.encrypt(secret);
    },
    false,
    stored,
  ) as Record<string, unknown>;
}

export function decryptConfigSecrets(config: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  return mapSecrets(config, (sealed) => (SecretBox.isSealed(sealed) ? box.decrypt(sealed) : sealed)) as Record<string, unknown>;
}

/** For admin reads: a hint of each stored credential, never the credential. */
export function maskConfigSecrets(config: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  return mapSecrets(config, (sealed) => maskSecret(SecretBox.isSealed(sealed) ? box.decrypt(sealed) : sealed)) as Record<string, unknown>;
}
