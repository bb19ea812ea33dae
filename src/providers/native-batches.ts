import type { ProviderTarget } from './provider-target';
import type { UpstreamRequest } from './upstream-request';

/**
 * A batch's state at its provider, in OpenAI's words (Anthropic's `in_progress`,
 * `canceling` and `ended` are read as `in_progress`, `cancelling`, and `completed` or
 * `cancelled`); a provider's running states are `validating`, `in_progress`, `finalizing`
 * and `cancelling`, the others are final.
 */
export type NativeBatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

/** What a provider says of one of its batches. */
export interface NativeBatchState {
  id: string;
  status: NativeBatchStatus;
  /** Why a `failed` batch failed, as the provider lists it (OpenAI's `errors.data`: `{code, message, param, line}`); null otherwise. */
  errors: { code: string; message: string; param?: string | null; line?: number | null }[] | null;
  /** How far the provider has got: requests ended well and badly of the total, as its batch object counts them; null when it says nothing. */
  progress: { succeeded: number; failed: number; total: number } | null;
  /** Where its results are once it has ended (OpenAI's output and error file ids); empty when the batch id says it (Anthropic). */
  resultFiles: string[];
}

/** One request's result, as the provider wrote it. */
export interface NativeBatchResult {
  customId: string;
  /** `succeeded` (a 2xx), `failed` (answered with an error), `errored` (not run: the provider's error), `expired`, `cancelled`. */
  status: 'succeeded' | 'failed' | 'errored' | 'expired' | 'cancelled';
  /** The answer's HTTP status (for Anthropic's `errored` results, the status of its error type); null for a request that never ran. */
  statusCode: number | null;
  /** The answer's body (OpenAI's `response.body`; Anthropic's `message`, or its `error` object); null when there was none. */
  body: unknown;
  requestId: string | null;
  /** OpenAI's `error` of a request that never ran (`{code, message}`); null otherwise. */
  error: { code: string; message: string } | null;
  /** The provider's id of the result line (OpenAI's `batch_req_…`); null when it has none. */
  resultId: string | null;
}

/** A batch to create at the provider: the gateway's lines that can run, with what the client asked. */
export interface NativeBatchSubmission {
  /** The gateway's id of the batch (named in the provider's metadata where there is room). */
  gatewayBatchId: string;
  /** The gateway's endpoint (`/v1/chat/completions`, `/v1/responses`, `/v1/embeddings`; `/v1/messages` for Anthropic). */
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  lines: { customId: string; body: Record<string, unknown> }[];
  /** Request headers the provider's API takes from the client (`anthropic-version`, `anthropic-beta`). */
  headers: Record<string, string>;
}

/**
 * How the batches module reaches the provider: through the gateway's upstream client, so
 * that the host policy, the timeouts and the credential scrubber apply. A provider's error
 * answer throws (its status and body kept, to pass through to the client).
 */
export interface BatchHttp {
  /** Sends a request and parses its JSON answer. */
  json(request: UpstreamRequest): Promise<Record<string, unknown>>;
  /** Sends a request and hands its answer's non-blank lines one at a time (a JSONL file of any size, never held whole). */
  lines(request: UpstreamRequest): AsyncIterable<string>;
}

/**
 * A provider's own Batch API (OpenAI's, Azure OpenAI's, Anthropic's Message Batches): what a
 * batch the gateway runs natively needs of it. Each method builds the provider's requests
 * for a target (already authorized) and reads its answers; the module sends them (`http`).
 */
export interface NativeBatchApi {
  /** The shape of the lines it runs: OpenAI's (`{custom_id, method, url, body}`) or Anthropic's (`{custom_id, params}`). */
  readonly shape: 'openai' | 'anthropic';
  /** The completion windows it takes (OpenAI's `24h` only); another window is run by the gateway. */
  readonly windows: readonly string[];
  /** Creates the batch (OpenAI: the lines uploaded as a file first); a refusal throws the provider's error answer. */
  submit(batch: NativeBatchSubmission, target: ProviderTarget, http: BatchHttp): Promise<NativeBatchState>;
  poll(id: string, target: ProviderTarget, http: BatchHttp): Promise<NativeBatchState>;
  /** The results of a batch that has ended, in the order the provider wrote them; lines it cannot read are skipped. */
  results(state: NativeBatchState, target: ProviderTarget, http: BatchHttp): AsyncIterable<NativeBatchResult>;
  cancel(id: string, target: ProviderTarget, http: BatchHttp): Promise<void>;
}

/** A line of a results file as JSON, or null when it is not an object (a cut line): skipped, so the request counts as without a result. */
export function parseResultLine(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or null. */
export function stringOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
