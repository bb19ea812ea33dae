import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { SecretBox } from './secret-box';

/** The key that seals stored secrets (SecretBox). Global: provider keys, MCP server headers and sign-in sessions are sealed with it, in three modules. */
@Global()
@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => new SecretBox(config.get('GATEWAY_ENCRYPTION_KEY', { infer: true })),
    },
  ],
  exports: [SecretBox],
})
export class CryptoModule {}
