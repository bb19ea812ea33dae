import { MigrationInterface, QueryRunner } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { isSecretProviderOption, openProviderOptions, sealClearProviderOptions } from '../../modules/keys/provider-option-secrets';

type OptionsRow = { id: string; provider_options: Record<string, string> };

/**
 * Secret `provider_options` of virtual keys (`aws_session_token`, `aws_external_id`, …, the
 * rule is `isSecretProviderOption`) were stored in clear; from here on they are sealed with
 * the gateway's SecretBox like `key`. Encrypting needs GATEWAY_ENCRYPTION_KEY, which a SQL
 * migration cannot see: hence a class made with the key (see `dataSourceOptions`). `down`
 * puts the values back in clear.
 */
export function encryptProviderOptionSecretsMigration(encryptionKey: string | undefined): new () => MigrationInterface {
  return class EncryptProviderOptionSecrets1764001200000 implements MigrationInterface {
    name = 'EncryptProviderOptionSecrets1764001200000';

    async up(db: QueryRunner): Promise<void> {
      await rewrite(db, encryptionKey, sealClearProviderOptions);
    }

    async down(db: QueryRunner): Promise<void> {
      await rewrite(db, encryptionKey, openProviderOptions);
    }
  };
}

async function rewrite(
  db: QueryRunner,
  encryptionKey: string | undefined,
  map: (options: Record<string, string>, box: SecretBox) => Record<string, string>,
): Promise<void> {
  const rows = (await db.query(`select id, provider_options from virtual_keys`)) as OptionsRow[];
  const withSecrets = rows.filter((row) => Object.keys(row.provider_options ?? {}).some(isSecretProviderOption));
  if (withSecrets.length === 0) return;
  if (!encryptionKey) {
    throw new Error(
      `${withSecrets.length} virtual key(s) hold secret provider_options to re-encode: set GATEWAY_ENCRYPTION_KEY (the gateway's key) to run this migration`,
    );
  }
  const box = new SecretBox(encryptionKey);
  for (const row of withSecrets) {
    await db.query(`update virtual_keys set provider_options = $1::jsonb where id = $2`, [JSON.stringify(map(row.provider_options, box)), row.id]);
  }
}
