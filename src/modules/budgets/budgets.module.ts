import { Global, Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { PricingModule } from '../pricing/pricing.module';
import { BudgetLedger } from './budget-ledger.service';
import { RateLimiter } from './rate-limiter.service';

@Global()
@Module({ imports: [PricingModule, KeysModule], providers: [BudgetLedger, RateLimiter], exports: [BudgetLedger, RateLimiter] })
export class BudgetsModule {}
