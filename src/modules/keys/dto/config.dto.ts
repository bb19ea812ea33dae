import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Length, Matches } from 'class-validator';
import { SLUG } from './virtual-key.dto';

export class ConfigCreateDto {
  @ApiProperty() @IsString() @Length(1, 200)
  name: string;

  @ApiProperty() @IsString() @Length(1, 64) @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;

  @ApiProperty({ description: 'A gateway config (CONTRACT section 5)' }) @IsObject()
  config: Record<string, unknown>;
}

export class ConfigUpdateDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 200)
  name?: string;

  @ApiPropertyOptional() @IsOptional() @IsObject()
  config?: Record<string, unknown>;
}
