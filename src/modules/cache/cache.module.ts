import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { PostgresResponseCache } from './postgres-response-cache';
import { RedisResponseCache } from './redis-response-cache';
import { ResponseCache } from './response-cache';

/**
 * Provides the `ResponseCache`: Redis when REDIS_URL is set, else the gateway's
 * PostgreSQL. Named so as not to clash with Nest's own `CacheModule`.
 */
@Module({
  providers: [
    {
      provide: ResponseCache,
      inject: [ConfigService, DataSource],
      useFactory: (config: ConfigService<Environment, true>, dataSource: DataSource): ResponseCache =>
        config.get('REDIS_URL', { infer: true }) ? new RedisResponseCache(config) : new PostgresResponseCache(dataSource, config),
    },
  ],
  exports: [ResponseCache],
})
export class ResponseCacheModule {}
