import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { maskSecret, sha256 } from '../../common/crypto/secret-box';
import type { Environment } from '../../config/environment';
import { generateApiKeySecret } from './api-keys.service';
import { ApiKeyEntity } from './entities/api-key.entity';

/**
 * Makes sure an admin can sign in: GATEWAY_ADMIN_KEY becomes the bootstrap admin key
 * (replacing an earlier one); without it, the first start generates a key and prints
 * it once.
 */
@Injectable()
export class BootstrapAdminService implements OnApplicationBootstrap {
  private readonly logger = new Logger('BootstrapAdmin');

  constructor(
    @InjectRepository(ApiKeyEntity) private readonly repo: Repository<ApiKeyEntity>,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const configured = this.config.get('GATEWAY_ADMIN_KEY', { infer: true });
    const existing = await this.repo.findOneBy({ isBootstrap: true });
    if (!configured && existing) return;

    const secret = configured ?? generateApiKeySecret();
    const hash = sha256(secret);
    if (existing?.keyHash === hash && !existing.revokedAt) return;
    await this.repo.manager.transaction(async (tx) => {
      if (existing && existing.keyHash !== hash) {
        await tx.update(ApiKeyEntity, { id: existing.id }, { isBootstrap: false, revokedAt: new Date() });
      }
      // An upsert, so instances starting together with the same key do not collide.
      await tx
        .createQueryBuilder()
        .insert()
        .into(ApiKeyEntity)
        .values({ name: 'bootstrap admin', role: 'owner', keyHash: hash, keyHint: maskSecret(secret), isBootstrap: true, revokedAt: null })
        .orUpdate(['is_bootstrap', 'revoked_at', 'role'], ['key_hash'])
        .execute();
    });
    if (!configured) {
      // Printed once, on purpose: this is the only way to learn the generated key.
      process.stdout.write(`\n  Generated admin API key (shown once, store it now): ${secret}\n  Set GATEWAY_ADMIN_KEY to choose your own.\n\n`);
    }
    this.logger.log('Bootstrap admin key ready');
  }
}
