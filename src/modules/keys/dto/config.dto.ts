import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { Omittable } from '../../../common/pipes/validators';
import { toInt } from '../../../common/query-transforms';
import { MAX_VERSION } from '../admin-list';
import { SLUG } from './virtual-key.dto';

export class ConfigCreateDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty()
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;

  @ApiProperty({ description: 'A gateway config (CONTRACT section 5)' })
  @IsObject()
  config: Record<string, unknown>;
}

export class ConfigUpdateDto {
  @ApiPropertyOptional()
  @Omittable()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional()
  @Omittable()
  @IsObject()
  config?: Record<string, unknown>;
}

export class ConfigReadQueryDto {
  @ApiPropertyOptional({ description: 'An earlier version to read; default the latest', minimum: 1 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_VERSION)
  version?: number;
}
