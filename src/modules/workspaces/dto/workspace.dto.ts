import { ApiProperty, PartialType, PickType } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { KeyLimitsDto } from '../../keys/dto/key-limits.dto';

const SLUG = /^[a-z0-9-]+$/;

/** A workspace's budget and rate limits hold across all its keys, as a key's do (CONTRACT section 13). */
class WorkspaceLimitsDto extends PickType(KeyLimitsDto, ['budget_limit_usd', 'budget_period', 'rate_limits'] as const) {}

export class WorkspaceCreateDto extends WorkspaceLimitsDto {
  @ApiProperty({ example: 'Search team' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'search' })
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;
}

export class WorkspaceUpdateDto extends PartialType(WorkspaceCreateDto, { skipNullProperties: false }) {}
