import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsIn, IsObject, IsString, Length } from 'class-validator';
import { Omittable } from '../../../common/pipes/validators';
import { IsStringRecord } from './string-record.validator';
import { KeyLimitsDto } from './key-limits.dto';

export class ApiKeyCreateDto extends KeyLimitsDto {
  @ApiProperty() @IsString() @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ enum: ['admin', 'user'], default: 'user' }) @Omittable() @IsIn(['admin', 'user'])
  role?: 'admin' | 'user';

  @ApiPropertyOptional({ description: 'Merged into the metadata of every log of this key' })
  @Omittable() @IsObject() @IsStringRecord()
  metadata?: Record<string, string>;
}

export class ApiKeyUpdateDto extends PartialType(ApiKeyCreateDto, { skipNullProperties: false }) {}
