import { Global, Module } from '@nestjs/common';
import { PricingModule } from '../pricing/pricing.module';
import { BudgetLedger } from './budget-ledger.service';

@Global()
@Module({ imports: [PricingModule], providers: [BudgetLedger], exports: [BudgetLedger] })
export class BudgetsModule {}
