/**
 * The answers of `GET /v1/analytics/users` and `/users/{user}` (end-user-activity.service.ts)
 * as the OpenAPI document describes them. Swagger metadata only.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BUDGET_PERIODS, type BudgetPeriod } from '../../../context/key-limits';

export class EndUserBudgetResponseDto {
  @ApiProperty({ format: 'uuid', description: "The end user's budget record (/v1/end-users)" })
  id: string;

  @ApiProperty({ type: Number, nullable: true })
  budget_limit_usd: number | null;

  @ApiProperty({ enum: BUDGET_PERIODS, nullable: true })
  budget_period: BudgetPeriod | null;
}

/** An end user's figures in the period. */
export class EndUserActivityResponseDto {
  @ApiProperty({ description: 'The end user (`user` in the body, or `_user` in x-gateway-metadata)' })
  user: string;

  @ApiProperty({ type: 'integer' })
  requests: number;

  @ApiProperty({ type: 'integer' })
  errors: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Null: none of their requests has a known price (never 0 for an unknown price)' })
  cost_usd: number | null;

  @ApiProperty({ type: 'integer', description: 'Requests that used a model without a known price: not in cost_usd' })
  unpriced_requests: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Their first request in the period' })
  first_seen: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Their last request in the period' })
  last_seen: string | null;

  @ApiPropertyOptional({
    type: EndUserBudgetResponseDto,
    nullable: true,
    description: "Their budget record, null when none; left out for roles that may not read end users' records",
  })
  budget?: EndUserBudgetResponseDto | null;
}

export class EndUserActivityListResponseDto {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;

  @ApiProperty({ type: 'integer', description: 'The end users listed on every page together' })
  total: number;

  @ApiProperty({ type: [EndUserActivityResponseDto] })
  data: EndUserActivityResponseDto[];

  @ApiProperty({ type: String, nullable: true, description: 'The cursor of the next page; null on the last' })
  next_cursor: string | null;
}

export class EndUserActivityDetailResponseDto extends EndUserActivityResponseDto {
  @ApiProperty({ enum: ['analytics.end_user'] })
  object: 'analytics.end_user';

  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;
}
