/**
 * The budget and spend fields of a key's answer (API keys, virtual keys, end users,
 * workspaces: SpendService.budgetStatus) as the OpenAPI document describes them.
 */
import { ApiProperty } from '@nestjs/swagger';
import { BUDGET_PERIODS, type BudgetPeriod } from '../../../context/key-limits';

export class BudgetStatusResponseDto {
  @ApiProperty({ type: Number, nullable: true })
  budget_limit_usd: number | null;

  @ApiProperty({ enum: BUDGET_PERIODS, nullable: true, description: 'Null: the budget is for all time' })
  budget_period: BudgetPeriod | null;

  @ApiProperty({ description: "Known spend in the budget's period (all time without a period); requests without a price are in unpriced_requests" })
  spent_usd: number;

  @ApiProperty({ type: 'integer', description: 'Requests in the period that used a model without a known price: not in spent_usd' })
  unpriced_requests: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Null without a budget' })
  budget_remaining_usd: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: "The current period's start; null without a period" })
  budget_period_start: string | null;
}
