import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { BodyLayout } from '../body-parts/body-parts';
import { numericColumn } from '../../../database/column-transformers';
import type { ToolCallRecord } from '../../../context/tool-call-record';

/**
 * One row per gateway request (CONTRACT section 6). The id is a UUIDv7, so ordering by
 * id is ordering by time: the log list pages by keyset on the primary key. The table is
 * partitioned by day of created_at, which its primary key therefore holds too (migration
 * PartitionRequestLogs).
 */
export const ROW_KINDS = ['request', 'attempt', 'tool_round', 'tool_call'] as const;
export type RowKind = (typeof ROW_KINDS)[number];

@Entity('request_logs')
export class RequestLogEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text', { name: 'trace_id' })
  traceId: string;

  /**
   * What the row is (migration LogRequestKinds): `request`, what a client sent; nested under
   * it (`parent_id`), an `attempt` that failed before its answer, a `tool_round` of the MCP
   * loop, a `tool_call` the gateway ran. Analytics count requests.
   */
  @Column('text', { default: 'request' })
  kind: RowKind;

  /** The id of the request's row, for a row nested under it; null for a request. */
  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId: string | null;

  /** On a request's row: the tries that failed before its answer (retries and fallbacks). */
  @Column('smallint', { name: 'failed_attempts', default: 0 })
  failedAttempts: number;

  /** On a request's row: the rows nested under it. */
  @Column('smallint', { name: 'nested_rows', default: 0 })
  nestedRows: number;

  /** The batch a row's request was a line of (migration Batches), and the line's `custom_id`; null for every other request. */
  @Column('text', { name: 'batch_id', nullable: true })
  batchId: string | null;

  @Column('text', { name: 'custom_id', nullable: true })
  customId: string | null;

  @PrimaryColumn('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('text')
  operation: string;

  @Column('uuid', { name: 'api_key_id', nullable: true })
  apiKeyId: string | null;

  @Column('uuid', { name: 'virtual_key_id', nullable: true })
  virtualKeyId: string | null;

  @Column('uuid', { name: 'config_id', nullable: true })
  configId: string | null;

  @Column('uuid', { name: 'prompt_id', nullable: true })
  promptId: string | null;

  @Column('integer', { name: 'prompt_version', nullable: true })
  promptVersion: number | null;

  @Column('text', { nullable: true })
  provider: string | null;

  @Column('text', { nullable: true })
  model: string | null;

  @Column('integer', { name: 'status_code' })
  statusCode: number;

  @Column('boolean', { name: 'is_stream', default: false })
  isStream: boolean;

  @Column('jsonb', { name: 'request_headers', nullable: true })
  requestHeaders: Record<string, string> | null;

  @Column('jsonb', { name: 'request_body', nullable: true })
  requestBody: unknown;

  @Column('jsonb', { name: 'response_body', nullable: true })
  responseBody: unknown;

  /**
   * The bodies' parts, in the order of `partLayout` (CONTRACT section 14, body-parts.ts): the
   * bodies above are then skeletons and read whole only through LogBodyReader. Null for a
   * row stored whole (written before parts, or with nothing worth a part).
   */
  @Column('uuid', { name: 'part_hashes', array: true, nullable: true })
  partHashes: string[] | null;

  @Column('jsonb', { name: 'part_layout', nullable: true })
  partLayout: { request?: BodyLayout; response?: BodyLayout } | null;

  /** The bodies' JSON size in bytes as received (request and response), before they were split. */
  @Column('integer', { name: 'body_bytes', nullable: true })
  bodyBytes: number | null;

  @Column('integer', { name: 'prompt_tokens', nullable: true })
  promptTokens: number | null;

  @Column('integer', { name: 'completion_tokens', nullable: true })
  completionTokens: number | null;

  @Column('integer', { name: 'total_tokens', nullable: true })
  totalTokens: number | null;

  @Column('integer', { name: 'cached_tokens', nullable: true })
  cachedTokens: number | null;

  /** Prompt tokens written to the provider's prompt cache (part of promptTokens, priced apart). */
  @Column('integer', { name: 'cache_write_tokens', nullable: true })
  cacheWriteTokens: number | null;

  @Column('integer', { name: 'reasoning_tokens', nullable: true })
  reasoningTokens: number | null;

  /** Non-token quantities billed (search units, web searches, audio seconds, characters); null when none. */
  @Column('jsonb', { name: 'billed_units', nullable: true })
  billedUnits: Record<string, number> | null;

  @Column('numeric', { name: 'cost_usd', precision: 20, scale: 10, nullable: true, transformer: numericColumn })
  costUsd: number | null;

  @Column('integer', { name: 'latency_ms' })
  latencyMs: number;

  @Column('integer', { name: 'ttft_ms', nullable: true })
  ttftMs: number | null;

  /** The end user (`user` in the body, or `_user` in x-gateway-metadata). */
  @Column('text', { name: 'end_user', nullable: true })
  user: string | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, string>;

  @Column('jsonb', { nullable: true })
  error: { type: string; code: string | null; message: string } | null;

  @Column('integer', { name: 'retry_count', default: 0 })
  retryCount: number;

  @Column('text', { name: 'cache_status', nullable: true })
  cacheStatus: string | null;

  @Column('text', { name: 'target_index', nullable: true })
  targetIndex: string | null;

  /** Guardrail results, input and output: `{input?: [...], output?: [...]}` (see GuardrailResult). */
  @Column('jsonb', { nullable: true })
  guardrails: Record<string, unknown> | null;

  /** Request fields a translation dropped because they only tune delivery or caching (CONTRACT section 12); null when none. */
  @Column('jsonb', { name: 'ignored_params', nullable: true })
  ignoredParams: string[] | null;

  /** The MCP tool calls the gateway ran for this model request, by round (see ToolCallRecord); null when none. */
  @Column('jsonb', { name: 'tool_calls', nullable: true })
  toolCalls: ToolCallRecord[] | null;
}
