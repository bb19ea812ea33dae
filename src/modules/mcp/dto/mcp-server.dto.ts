import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUrl, Length, Matches, ValidateIf } from 'class-validator';
import { isSecretHint } from '../../../common/crypto/secret-box';
import { isHeaderValue } from '../../../common/http/header-value';
import { Omittable } from '../../../common/pipes/validators';
import { SLUG } from '../../keys/dto/virtual-key.dto';
import { IsRecordOf } from '../../keys/dto/string-record.validator';

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 8192;

/**
 * Header names to string values (credentials such as a bearer token may be long). A value is
 * a header value (no control characters, Latin-1) or the hint a read showed (sealHeaders keeps the stored one).
 */
const IsHeaderRecord = () =>
  IsRecordOf(
    'isHeaderRecord',
    MAX_HEADERS,
    (name, v) => HEADER_NAME.test(name) && typeof v === 'string' && v.length <= MAX_HEADER_VALUE && (isHeaderValue(v) || isSecretHint(v)),
    (property) =>
      `${property} must be an object of at most ${MAX_HEADERS} header names to string values (no line breaks or other control characters, Latin-1 only, at most ${MAX_HEADER_VALUE} characters)`,
  );

export class McpServerCreateDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'github' })
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;

  @ApiProperty({ example: 'https://mcp.example.com/mcp', description: 'Streamable HTTP endpoint (or SSE, for older servers)' })
  @IsString()
  @Length(1, 2048)
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true }, { message: 'url must be an http(s) URL' })
  url: string;

  @ApiPropertyOptional({ description: 'Headers sent to the server (credentials): encrypted at rest, masked on read' })
  @Omittable()
  @IsHeaderRecord()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ nullable: true, type: [String], description: 'The tools callers may use on this server (null: every tool it lists)' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsArray()
  @ArrayMaxSize(1024)
  @IsString({ each: true })
  @Length(1, 128, { each: true })
  allowed_tools?: string[] | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Length(0, 2000)
  description?: string | null;
}

/** The slug stays: keys name servers by it. */
export class McpServerUpdateDto extends PartialType(OmitType(McpServerCreateDto, ['slug'] as const), { skipNullProperties: false }) {}
