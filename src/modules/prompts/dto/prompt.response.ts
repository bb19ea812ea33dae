/** A prompt and its versions as the admin API answers them (PromptsService), for the OpenAPI document. */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A version's template, spread into the answer: model and messages always, the rest when the version has them. */
class PromptTemplateResponseDto {
  @ApiProperty({ example: 'gpt-4o-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiPropertyOptional({ description: 'Slug of the virtual key the prompt runs on when the call names no route' })
  virtual_key?: string;

  @ApiPropertyOptional({ description: 'A provider id, used with the caller’s Authorization header (or a credential-free provider)' })
  provider?: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Chat messages whose contents are Mustache templates ({{variable}})',
  })
  messages: Record<string, unknown>[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Default values of the variables' })
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Chat completion parameters' })
  hyperparameters?: Record<string, unknown>;
}

/** A prompt: its latest version (or the one `?version=` names), the template's fields at the top level. */
export class PromptResponseDto extends PromptTemplateResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['prompt'] })
  object: 'prompt';

  @ApiProperty()
  name: string;

  @ApiProperty()
  slug: string;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  version: number;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time', description: 'When this version was written' })
  updated_at: string;
}

/** One version of `GET /v1/prompts/{id}/versions`: its number, name, time and template. */
export class PromptVersionResponseDto extends PromptTemplateResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version: number;

  @ApiProperty({ description: "The prompt's name when this version was written" })
  name: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}
