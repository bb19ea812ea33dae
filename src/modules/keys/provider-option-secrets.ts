import { maskSecret, SecretBox } from '../../common/crypto/secret-box';

/**
 * Which `provider_options` of a virtual key are credentials, decided here and nowhere else.
 *
 * The rule: an option is a secret when its name (compared in lower case)
 * - is one of {@link NAMED_SECRET_OPTIONS} (credentials whose names say nothing of it, such as
 *   `aws_external_id`, the shared secret of a cross-account role), or
 * - is `key`, `token`, `secret` or `password`, or ends in `_key`, `_token`, `_secret` or `_password`,
 * unless it is one of {@link NOT_SECRET_OPTIONS} (identifiers that look like credentials).
 * Erring towards secret costs an admin a masked value on read; erring the other way leaks one.
 */
const NAMED_SECRET_OPTIONS = new Set(['aws_session_token', 'aws_external_id', 'aws_secret_access_key']);
const NOT_SECRET_OPTIONS = new Set(['aws_access_key_id']);
const SECRET_NAME = /(^|_)(key|token|secret|password)$/;

export function isSecretProviderOption(name: string): boolean {
  const lower = name.toLowerCase();
  if (NOT_SECRET_OPTIONS.has(lower)) return false;
  return NAMED_SECRET_OPTIONS.has(lower) || SECRET_NAME.test(lower);
}

/** A stored option in clear: sealed ones opened, clear ones (stored before encryption) as they are. */
function open(stored: string, box: SecretBox): string {
  return SecretBox.isSealed(stored) ? box.decrypt(stored) : stored;
}

function mapSecretOptions(options: Record<string, string>, map: (name: string, value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(options).map(([name, value]) => [name, isSecretProviderOption(name) ? map(name, value) : value]));
}

/**
 * Options as stored: every secret encrypted. A secret sent back as the masked hint an admin
 * read showed (`previous` holding it under the same name) keeps the stored secret, so that
 * a client may PATCH the options it read without erasing credentials it never saw.
 */
export function sealProviderOptions(options: Record<string, string>, box: SecretBox, previous: Record<string, string> = {}): Record<string, string> {
  return mapSecretOptions(options, (name, value) => {
    const stored = previous[name];
    if (typeof stored === 'string' && value === maskSecret(open(stored, box))) return SecretBox.isSealed(stored) ? stored : box.encrypt(stored);
    return box.encrypt(value);
  });
}

/** Options to route with, secrets decrypted: for the in-memory resolved key only. */
export function openProviderOptions(options: Record<string, string>, box: SecretBox): Record<string, string> {
  return mapSecretOptions(options, (_, value) => open(value, box));
}

/** For admin reads: a hint of each secret (as `key_hint` is of `key`), never the secret. */
export function maskProviderOptions(options: Record<string, string>, box: SecretBox): Record<string, string> {
  return mapSecretOptions(options, (_, value) => maskSecret(open(value, box)));
}

/** Options with every secret still in clear encrypted (the migration of rows stored before). */
export function sealClearProviderOptions(options: Record<string, string>, box: SecretBox): Record<string, string> {
  return mapSecretOptions(options, (_, value) => (SecretBox.isSealed(value) ? value : box.encrypt(value)));
}
