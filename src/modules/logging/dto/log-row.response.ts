/**
 * The request log's wire shapes (CONTRACT section 6) as the OpenAPI document describes them:
 * what `toLogResponse` (logs.service.ts) builds, for the dashboard's generated types. Swagger
 * metadata only; logs.service.spec.ts checks that the row's keys and these properties agree.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ROW_KINDS, type RowKind } from '../entities/request-log.entity';

/** Any JSON value (a body as the client or the provider sent it). */
const ANY_JSON = {
  oneOf: [{ type: 'object', additionalProperties: true }, { type: 'array', items: {} }, { type: 'string' }, { type: 'number' }, { type: 'boolean' }],
};

export class LogErrorResponseDto {
  @ApiProperty({ example: 'rate_limit_error' })
  type: string;

  @ApiProperty({ type: String, nullable: true })
  code: string | null;

  @ApiProperty()
  message: string;
}

export class GuardrailCheckResponseDto {
  @ApiProperty({ example: 'contains' })
  type: string;

  @ApiProperty({ description: 'Whether the check passed' })
  verdict: boolean;

  @ApiProperty()
  reason: string;
}

export class GuardrailResultResponseDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'Whether a failure denies the request' })
  deny: boolean;

  @ApiProperty({ description: 'True when every check passed' })
  verdict: boolean;

  @ApiProperty({ type: [GuardrailCheckResponseDto] })
  checks: GuardrailCheckResponseDto[];
}

export class LogGuardrailsResponseDto {
  @ApiPropertyOptional({ type: [GuardrailResultResponseDto] })
  input?: GuardrailResultResponseDto[];

  @ApiPropertyOptional({ type: [GuardrailResultResponseDto] })
  output?: GuardrailResultResponseDto[];
}

export class ToolCallRecordResponseDto {
  @ApiProperty({ description: 'The model round that asked for it (1 = the first answer)' })
  round: number;

  @ApiProperty({ description: 'The id the model gave the call' })
  call_id: string;

  @ApiProperty({ description: 'The MCP server slug' })
  server: string;

  @ApiProperty()
  tool: string;

  @ApiProperty()
  is_error: boolean;

  @ApiProperty()
  latency_ms: number;

  @ApiProperty({ description: "The id of the call's own row (operation mcp.tools.call)" })
  log_id: string;
}

export class SearchSnippetResponseDto {
  @ApiProperty({ enum: ['request', 'response'], description: "Where the text is: the request's body or the answer" })
  in: 'request' | 'response';

  @ApiProperty()
  text: string;

  @ApiProperty({
    description: 'Start and end (exclusive) of each word found in `text`, in order',
    type: 'array',
    items: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
  })
  highlights: [number, number][];
}

/** A request's figures with the rows nested under it (`GET /v1/logs/{id}` of a request). */
export class RequestTotalsResponseDto {
  @ApiProperty({ description: 'The rows counted: the request and those nested under it' })
  rows: number;

  @ApiProperty()
  prompt_tokens: number;

  @ApiProperty()
  completion_tokens: number;

  @ApiProperty()
  total_tokens: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Null when some row used a model without a price and none had one' })
  cost_usd: number | null;

  @ApiProperty({ description: 'Rows that used a model without a known price: not in cost_usd' })
  unpriced_rows: number;
}

/** One row of the request log. */
export class LogRowResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['request_log'] })
  object: 'request_log';

  @ApiProperty()
  trace_id: string;

  @ApiProperty({
    enum: ROW_KINDS,
    description: '`request`: what a client sent; nested under one (parent_id): a failed try (`attempt`), a `tool_round` or a `tool_call`',
  })
  kind: RowKind;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: "The request's row, for a row nested under it" })
  parent_id: string | null;

  @ApiProperty({ type: 'integer', description: 'On a request: the tries that failed before its answer' })
  failed_attempts: number;

  @ApiProperty({ type: 'integer', description: 'On a request: the rows nested under it' })
  nested_rows: number;

  @ApiProperty({ type: String, nullable: true, description: 'The batch this request was a line of (`batch_…` or `msgbatch_…`)' })
  batch_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The batch line's `custom_id`" })
  custom_id: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ example: 'chat.completions' })
  operation: string;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  api_key_id: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  virtual_key_id: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  config_id: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  prompt_id: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  prompt_version: number | null;

  @ApiProperty({ type: String, nullable: true })
  provider: string | null;

  @ApiProperty({ type: String, nullable: true })
  model: string | null;

  @ApiProperty({ type: 'integer' })
  status_code: number;

  @ApiProperty()
  is_stream: boolean;

  @ApiProperty({ type: 'integer', nullable: true })
  prompt_tokens: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  completion_tokens: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  total_tokens: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  cached_tokens: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  cache_write_tokens: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  reasoning_tokens: number | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    nullable: true,
    description: 'Non-token quantities billed (search units, web searches, audio seconds, characters)',
  })
  billed_units: Record<string, number> | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Null: the model has no known price (never 0 for an unknown price)' })
  cost_usd: number | null;

  @ApiProperty({ type: 'integer' })
  latency_ms: number;

  @ApiProperty({ type: 'integer', nullable: true })
  ttft_ms: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'The end user' })
  user: string | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  metadata: Record<string, string>;

  @ApiProperty({ type: LogErrorResponseDto, nullable: true })
  error: LogErrorResponseDto | null;

  @ApiProperty({ type: 'integer' })
  retry_count: number;

  @ApiProperty({ type: String, nullable: true })
  cache_status: string | null;

  @ApiProperty({ type: String, nullable: true })
  target_index: string | null;

  @ApiProperty({ type: LogGuardrailsResponseDto, nullable: true, description: "Guardrail results by stage, when the request's config had guardrails" })
  guardrails: LogGuardrailsResponseDto | null;

  @ApiProperty({ type: [String], nullable: true, description: 'Request fields a translation dropped (CONTRACT section 12)' })
  ignored_params: string[] | null;

  @ApiProperty({ type: [ToolCallRecordResponseDto], nullable: true, description: 'The MCP tool calls the gateway ran for this request, by round' })
  tool_calls: ToolCallRecordResponseDto[] | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'With the bodies (include_bodies)' })
  request_headers?: Record<string, string> | null;

  @ApiPropertyOptional({ ...ANY_JSON, nullable: true, description: 'With the bodies (include_bodies)' })
  request_body?: unknown;

  @ApiPropertyOptional({ ...ANY_JSON, nullable: true, description: 'With the bodies (include_bodies)' })
  response_body?: unknown;

  @ApiPropertyOptional({ type: RequestTotalsResponseDto, description: 'On a request read alone (GET /v1/logs/{id}): its tokens and cost with its nested rows' })
  totals?: RequestTotalsResponseDto;

  @ApiPropertyOptional({
    type: SearchSnippetResponseDto,
    nullable: true,
    description: "With a search (q) only: where the row's bodies hold a word searched for",
  })
  snippet?: SearchSnippetResponseDto | null;
}
