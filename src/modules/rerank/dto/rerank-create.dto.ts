import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isBoolean, isInt, isNotEmpty, isString, Rule } from '../../../common/pipes/body-rules';

/** Strings, or `{text}` objects (Jina's and Cohere v1's form): what the gateway reads back into `document.text`. */
const rerankDocuments: Rule = (v, f) => {
  if (!Array.isArray(v)) return `${f} must be an array of strings or of objects with a text`;
  if (v.length === 0) return `${f} should not be empty`;
  for (let i = 0; i < v.length; i++) {
    const document: unknown = v[i];
    if (typeof document === 'string') continue;
    if (typeof document === 'object' && document !== null && !Array.isArray(document) && typeof (document as { text?: unknown }).text === 'string') continue;
    return `${f}[${i}] must be a string or an object with a string text`;
  }
  return null;
};

/**
 * The fields of a rerank request the gateway reads (the documents it puts back into the
 * answer, how many results, whether to return documents); any other field passes
 * through to the provider (Cohere's `max_tokens_per_doc`, …).
 */
export const RERANK_SCHEMA = {
  required: {
    model: isString(256),
    query: all(isString(), isNotEmpty),
    documents: rerankDocuments,
  },
  optional: {
    top_n: isInt(1),
    return_documents: isBoolean,
    user: isString(256),
  },
};

/** `POST /v1/rerank` (Cohere's and Jina's shape). The OpenAPI description; the checks are RERANK_SCHEMA. */
export class RerankCreateDto {
  [extra: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, RERANK_SCHEMA);
  }

  @ApiProperty({ example: 'rerank-v3.5', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ description: 'The search query' })
  query: string;

  @ApiProperty({
    description: 'Documents to rank against the query: strings, or objects with a text',
    oneOf: [
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } } },
    ],
  })
  documents: (string | { text: string })[];

  @ApiPropertyOptional({ minimum: 1, description: 'How many of the best results to return (default: all)' })
  top_n?: number;

  @ApiPropertyOptional({ description: "Put each result's document into the answer (default false)" })
  return_documents?: boolean;

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;
}
