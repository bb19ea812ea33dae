import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * With the embedded database the gateway keeps its own encryption key beside the data,
 * generated at first start (a shared server needs the same key on every instance, so
 * there GATEWAY_ENCRYPTION_KEY is required instead).
 */
export function loadOrCreateEncryptionKey(dataDir: string): string {
  const file = join(dataDir, 'encryption.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
