import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsNumber, IsOptional, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IsInstant, MaxDecimalPlaces, Omittable } from '../../../common/pipes/validators';
import { BUDGET_PERIODS, RATE_LIMIT_TYPES, RATE_LIMIT_UNITS } from '../../../context/key-limits';

export class RateLimitDto {
  @ApiProperty({ enum: RATE_LIMIT_TYPES })
  @IsIn(RATE_LIMIT_TYPES)
  type: (typeof RATE_LIMIT_TYPES)[number];

  @ApiProperty({ enum: RATE_LIMIT_UNITS })
  @IsIn(RATE_LIMIT_UNITS)
  unit: (typeof RATE_LIMIT_UNITS)[number];

  @ApiProperty({ minimum: 1 })
  @IsInt()
  @Min(1)
  value: number;
}

/** Budget, rate limits and expiry: the same fields on API keys and virtual keys. */
export class KeyLimitsDto {
  @ApiPropertyOptional({ nullable: true, minimum: 0 })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @MaxDecimalPlaces(6)
  @Min(0)
  @Max(1e9)
  budget_limit_usd?: number | null;

  @ApiPropertyOptional({ enum: BUDGET_PERIODS, nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsIn(BUDGET_PERIODS)
  budget_period?: (typeof BUDGET_PERIODS)[number] | null;

  @ApiPropertyOptional({ type: [RateLimitDto] })
  @Omittable()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => RateLimitDto)
  rate_limits?: RateLimitDto[];

  @ApiPropertyOptional({ nullable: true, description: 'ISO 8601 date-time' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInstant()
  expires_at?: string | null;
}
