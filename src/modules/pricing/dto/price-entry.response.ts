/**
 * `GET /v1/prices` and `POST /v1/prices` as the OpenAPI document describes them (see
 * price-overrides.service.ts): one provider's model, where its price comes from, and its
 * rates in USD per million tokens (per unit for the unit fields); null where the model has
 * no such rate.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const RATE = { type: Number, nullable: true } as const;

export class PriceEntryResponseDto {
  @ApiProperty()
  provider: string;

  @ApiProperty()
  model: string;

  @ApiProperty({ enum: ['override', 'local', 'catalog'], description: 'Where the price comes from, in the order they win' })
  source: 'override' | 'local' | 'catalog';

  @ApiPropertyOptional({ description: "The catalog's provider for a catalog entry" })
  catalog_provider?: string;

  @ApiPropertyOptional({ description: 'The catalog model a requested name was matched to (with `model` in the query)' })
  catalog_model?: string;

  @ApiProperty({ ...RATE, description: 'USD per million input tokens' })
  input: number | null;

  @ApiProperty({ ...RATE, description: 'USD per million output tokens' })
  output: number | null;

  @ApiProperty(RATE)
  cached_input: number | null;

  @ApiProperty(RATE)
  cache_write: number | null;

  @ApiProperty(RATE)
  reasoning: number | null;

  @ApiProperty(RATE)
  audio_input: number | null;

  @ApiProperty(RATE)
  cached_audio_input: number | null;

  @ApiProperty(RATE)
  audio_output: number | null;

  @ApiProperty({ ...RATE, description: 'USD per image' })
  per_image: number | null;

  @ApiProperty({ ...RATE, description: 'USD per second of audio' })
  per_second: number | null;

  @ApiProperty({ ...RATE, description: 'USD per character' })
  per_character: number | null;

  @ApiProperty({ ...RATE, description: 'USD per search' })
  per_search: number | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "A local entry's image prices by quality and size" })
  per_image_by_quality_and_size?: Record<string, unknown>;

  @ApiPropertyOptional({ format: 'date-time', description: 'An override: when it was set' })
  created_at?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'An override: when it last changed' })
  updated_at?: string;
}

export class PriceCatalogResponseDto {
  @ApiProperty({ description: 'The price catalog package', example: '@pydantic/genai-prices' })
  name: string;

  @ApiProperty()
  version: string;
}

export class PriceListResponseDto {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: PriceCatalogResponseDto, description: 'The price catalog and its version' })
  catalog: PriceCatalogResponseDto;

  @ApiProperty({ type: [PriceEntryResponseDto] })
  data: PriceEntryResponseDto[];

  @ApiProperty({ type: String, nullable: true })
  next_cursor: string | null;
}
