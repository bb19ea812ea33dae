import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { checkBody, isInt, isOneOf, isString, Rule } from '../../../common/pipes/body-rules';

const ENCODING_FORMATS = ['float', 'base64'] as const;

const isTokenId = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;

/** One element of an input array, which must be of the kind its first element is. */
function inputItemProblem(item: unknown, first: unknown, f: string): string | null {
  if (typeof first === 'string') return typeof item !== 'string' ? `${f} must be a string, like input[0]` : item ? null : `${f} should not be empty`;
  if (!Array.isArray(first)) return isTokenId(item) ? null : `${f} must be a token id (an integer >= 0)`;
  if (!Array.isArray(item)) return `${f} must be an array of token ids, like input[0]`;
  if (item.length === 0) return `${f} should not be empty`;
  const bad = item.findIndex((token) => !isTokenId(token));
  return bad === -1 ? null : `${f}[${bad}] must be a token id (an integer >= 0)`;
}

/** A string, or a non-empty array of strings, of token ids, or of token id arrays (OpenAI's four forms). */
const embeddingInput: Rule = (v, f) => {
  if (typeof v === 'string') return v ? null : `${f} should not be empty`;
  const forms = `${f} must be a string, an array of strings, an array of token ids or an array of token id arrays`;
  if (!Array.isArray(v)) return forms;
  if (v.length === 0) return `${f} should not be empty`;
  const first: unknown = v[0];
  if (typeof first !== 'string' && !Array.isArray(first) && !isTokenId(first)) return forms;
  for (let i = 0; i < v.length; i++) {
    const problem = inputItemProblem(v[i], first, `${f}[${i}]`);
    if (problem) return problem;
  }
  return null;
};

/**
 * The fields of an embeddings request the gateway reads or can check; any other field
 * passes through to the provider. Checked by hand like chat: a model operation's body.
 */
export const EMBEDDING_SCHEMA = {
  required: {
    model: isString(256),
    input: embeddingInput,
  },
  optional: {
    encoding_format: isOneOf(ENCODING_FORMATS),
    dimensions: isInt(1),
    user: isString(256),
  },
};

/** `POST /v1/embeddings` (OpenAI's format). The OpenAPI description; the checks are EMBEDDING_SCHEMA. */
export class EmbeddingCreateDto {
  [extra: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, EMBEDDING_SCHEMA);
  }

  @ApiProperty({ example: 'text-embedding-3-small', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({
    description: 'A string, or an array of strings, of token ids, or of token id arrays',
    oneOf: [
      { type: 'string' },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'integer' } },
      { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
    ],
  })
  input: string | string[] | number[] | number[][];

  @ApiPropertyOptional({ enum: ENCODING_FORMATS })
  encoding_format?: string;

  @ApiPropertyOptional({ minimum: 1 })
  dimensions?: number;

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;
}
