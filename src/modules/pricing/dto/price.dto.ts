import { IsOptional, IsString, MaxLength } from 'class-validator';
import { GatewayError } from '../../../common/errors/gateway-error';
import { ListQueryDto } from '../../../common/http/list.dto';
import { invalidPriceField, PRICE_FIELDS, type PriceFields } from '../price-fields';

/** `POST /v1/prices`: token rates in USD per million tokens, per-unit prices in USD per unit. */
export class PriceUpsertDto implements PriceFields {
  provider: string;
  model: string;
  input: number;
  output: number;
  cached_input?: number | null;
  cache_write?: number | null;
  reasoning?: number | null;
  audio_input?: number | null;
  cached_audio_input?: number | null;
  audio_output?: number | null;
  per_image?: number | null;
  per_second?: number | null;
  per_character?: number | null;
  per_search?: number | null;

  /** Checked by hand (GatewayValidationPipe calls this): a 400 naming the first bad field. */
  static validateBody(body: Record<string, unknown>): void {
    for (const field of ['provider', 'model'] as const) {
      const value = body[field];
      if (typeof value !== 'string' || value.trim() === '' || value.length > 256) {
        throw GatewayError.invalidRequest(`${field} must be a non-empty string of at most 256 characters`, field);
      }
    }
    for (const field of ['input', 'output'] as const) {
      if (body[field] === undefined || body[field] === null)
        throw GatewayError.invalidRequest(`${field} is required (USD per million tokens; 0 for none)`, field);
    }
    const bad = invalidPriceField(body);
    if (bad) throw GatewayError.invalidRequest(`${bad} must be a finite non-negative number`, bad);
    const known = new Set<string>(['provider', 'model', ...PRICE_FIELDS]);
    const unknown = Object.keys(body).find((field) => !known.has(field));
    // A typo such as "cache_input" would otherwise silently bill cached tokens at full price.
    if (unknown) throw GatewayError.invalidRequest(`Unknown field '${unknown}'. Known fields: ${[...known].join(', ')}`, unknown);
  }
}

/** `GET /v1/prices`: paged like every admin list (`limit`, `cursor`), filtered by exact provider id and model name. */
export class PriceQueryDto extends ListQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(256)
  provider?: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  model?: string;
}
