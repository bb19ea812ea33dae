import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayNotEmpty, IsArray, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import { Omittable } from '../../../common/pipes/validators';
import { toInt } from '../../../common/query-transforms';
import { MAX_VERSION } from '../../keys/admin-list';
import { SLUG } from '../../keys/dto/virtual-key.dto';

/** The template fields, shared by create and update (`model` and `messages`, required on create, are checked with the template). */
class PromptTemplateFields {
  @ApiProperty({ example: 'gpt-4o-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  @Omittable()
  @IsString()
  @Length(1, 256)
  model?: string;

  @ApiPropertyOptional({ nullable: true, description: 'Slug of the virtual key the prompt runs on when the call names no route' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Matches(SLUG, { message: 'virtual_key must be a virtual key slug ([a-z0-9-]+)' })
  virtual_key?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'A provider id, used with the caller’s Authorization header (or a credential-free provider)' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  provider?: string | null;

  @ApiProperty({ description: 'Chat messages whose contents are Mustache templates ({{variable}})' })
  @Omittable()
  @IsArray()
  @ArrayNotEmpty()
  messages?: Record<string, unknown>[];

  @ApiPropertyOptional({ description: 'Default values of the variables' })
  @Omittable()
  @IsObject()
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Chat completion parameters: max_tokens, temperature, top_p, presence_penalty, tools, response_format …' })
  @Omittable()
  @IsObject()
  hyperparameters?: Record<string, unknown>;
}

export class PromptCreateDto extends PromptTemplateFields {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'support-reply' })
  @IsString()
  @Length(1, 64)
  @Matches(SLUG, { message: 'slug must match [a-z0-9-]+' })
  slug: string;
}

/** Every field optional: the given ones replace the latest version's, making a new version. */
export class PromptUpdateDto extends PromptTemplateFields {
  @ApiPropertyOptional()
  @Omittable()
  @IsString()
  @Length(1, 200)
  name?: string;
}

export class PromptVersionQueryDto {
  @ApiPropertyOptional({ description: 'A version to use; default the latest', minimum: 1 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_VERSION)
  version?: number;
}
