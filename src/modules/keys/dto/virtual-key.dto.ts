import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsObject, IsOptional, IsString, IsUrl, Length, Matches, ValidateIf } from 'class-validator';
import { HasNoUserinfo, IsHeaderValue, Omittable } from '../../../common/pipes/validators';
import { IsProviderKey, IsProviderOptions, IsStringRecord } from './string-record.validator';
import { KeyAccessDto } from './key-access.dto';

export const SLUG = /^[a-z0-9-]+$/;

export class VirtualKeyCreateDto extends KeyAccessDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'openai-prod' })
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;

  @ApiProperty({ example: 'openai' })
  @IsString()
  provider: string;

  @ApiPropertyOptional({ description: 'Provider credential; encrypted at rest, never returned' })
  @Omittable()
  @IsString()
  @Length(1, 4096)
  @IsProviderKey()
  key?: string;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @IsHeaderValue()
  provider_organization?: string | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @IsHeaderValue()
  provider_project?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'Base URL replacing the provider default' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true }, { message: 'custom_host must be an http(s) URL' })
  @HasNoUserinfo()
  custom_host?: string | null;

  @ApiPropertyOptional({ description: "Provider settings, e.g. Azure's api_version, deployment, resource_name" })
  @Omittable()
  @IsObject()
  @IsStringRecord()
  @IsProviderOptions()
  provider_options?: Record<string, string>;

  @ApiPropertyOptional({ nullable: true, type: [String] })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsArray()
  @IsString({ each: true })
  allowed_models?: string[] | null;
}

export class VirtualKeyUpdateDto extends PartialType(OmitType(VirtualKeyCreateDto, ['slug'] as const), { skipNullProperties: false }) {
  @ApiPropertyOptional()
  @Omittable()
  @IsBoolean()
  disabled?: boolean;
}
