import { Global, Module } from '@nestjs/common';
import { PricingModule } from '../pricing/pricing.module';
import { BudgetLedger } from './budget-ledger.service';
import { RateLimiter } from './rate-limiter.service';

@Global()
@Module({ imports: [PricingModule], providers: [BudgetLedger, RateLimiter], exports: [BudgetLedger, RateLimiter] })
export class BudgetsModule {}
