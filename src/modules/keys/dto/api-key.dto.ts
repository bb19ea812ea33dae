import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { Omittable } from '../../../common/pipes/validators';
import { IsStringRecord } from './string-record.validator';
import { KeyAccessDto } from './key-access.dto';
import { SLUG } from './virtual-key.dto';
import { LEGACY_ROLES, ROLES } from '../../workspaces/roles';

const ROLE_NAMES = [...ROLES, ...Object.keys(LEGACY_ROLES)];

export class ApiKeyCreateDto extends KeyAccessDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ enum: ROLE_NAMES, default: 'member', description: '`user` is taken as `member`, its new name' })
  @Omittable()
  @IsIn(ROLE_NAMES)
  role?: string;

  @ApiPropertyOptional({ description: "Slug of the workspace the key belongs to (default: the creator's); fixed once created" })
  @Omittable()
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'workspace must be a workspace slug ([a-z0-9-]+)' })
  workspace?: string;

  @ApiPropertyOptional({ description: 'Merged into the metadata of every log of this key' })
  @Omittable()
  @IsObject()
  @IsStringRecord()
  metadata?: Record<string, string>;

  @ApiPropertyOptional({
    nullable: true,
    description: 'Slug of the virtual key used when a request names no route (no x-gateway-* routing header, no @slug/ model)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'default_virtual_key must be a virtual key slug ([a-z0-9-]+)' })
  default_virtual_key?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'Slug of the stored config used when a request names no route; wins over default_virtual_key' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'default_config must be a config slug ([a-z0-9-]+)' })
  default_config?: string | null;
}

export class ApiKeyUpdateDto extends PartialType(OmitType(ApiKeyCreateDto, ['workspace'] as const), { skipNullProperties: false }) {}
