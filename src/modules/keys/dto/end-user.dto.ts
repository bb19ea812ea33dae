import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { Omittable } from '../../../common/pipes/validators';
import { KeyLimitsDto } from './key-limits.dto';
import { IsStringRecord } from './string-record.validator';

/** Only the budget of the key fields applies to end users. */
class EndUserBudgetDto extends PickType(KeyLimitsDto, ['budget_limit_usd', 'budget_period'] as const) {}

export class EndUserCreateDto extends EndUserBudgetDto {
  @ApiProperty({ description: 'The `user` value requests carry', example: 'alice@example.com' })
  @IsString()
  @Length(1, 256)
  user: string;

  @ApiPropertyOptional()
  @Omittable()
  @IsStringRecord()
  metadata?: Record<string, string>;
}

export class EndUserUpdateDto extends EndUserBudgetDto {
  @ApiPropertyOptional()
  @Omittable()
  @IsStringRecord()
  metadata?: Record<string, string>;
}
