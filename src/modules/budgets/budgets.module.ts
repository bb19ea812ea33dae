import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { Environment } from '../../config/environment';
import { KeysModule } from '../keys/keys.module';
import { PricingModule } from '../pricing/pricing.module';
import { BudgetLedger } from './budget-ledger';
import { CounterStore } from './counter-store';
import { PostgresCounterStore } from './postgres-counter-store';
import { RateLimiter } from './rate-limiter';
import { RedisCounterStore } from './redis-counter-store';

/** Budgets and rate limits; their counters in Redis when REDIS_URL is set, else in PostgreSQL. Imported by routing (reservations, limits) and logging (settlements). */
@Module({
  imports: [PricingModule, KeysModule],
  providers: [
    BudgetLedger,
    RateLimiter,
    {
      provide: CounterStore,
      inject: [ConfigService, DataSource],
      useFactory: (config: ConfigService<Environment, true>, dataSource: DataSource): CounterStore => {
        const redisUrl = config.get('REDIS_URL', { infer: true });
        return redisUrl ? new RedisCounterStore(redisUrl) : new PostgresCounterStore(dataSource);
      },
    },
  ],
  exports: [BudgetLedger, RateLimiter, CounterStore],
})
export class BudgetsModule {}
