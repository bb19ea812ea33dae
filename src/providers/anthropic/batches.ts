import type { ProviderTarget } from '../provider-target';
import type { UpstreamRequest } from '../upstream-request';
import { isObject, parseResultLine, stringOf, type NativeBatchApi, type NativeBatchResult, type NativeBatchState } from '../native-batches';

/** Builds a call on the API (`path` after the version, e.g. `/messages/batches`), with the target's key and the client's version and betas. */
export type AnthropicRequest = (
  method: UpstreamRequest['method'],
  path: string,
  target: ProviderTarget,
  headers?: Record<string, string>,
  body?: Record<string, unknown>,
) => UpstreamRequest;

/** The HTTP status of each of Anthropic's error types (its errors page), for an `errored` result's log row. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * Anthropic's Message Batches API: `POST /messages/batches` with the requests inline,
 * polled until `processing_status` is `ended`, then the results JSONL (one line per
 * request: `succeeded` with its message, `errored` with its error, `canceled`, `expired`).
 * The results are read from the target's own host, not from the batch's `results_url`:
 * the credential goes only where the route sends it.
 */
export function anthropicBatches(request: AnthropicRequest): NativeBatchApi {
  const path = (id: string, suffix = '') => `/messages/batches/${encodeURIComponent(id)}${suffix}`;
  return {
    shape: 'anthropic',
    windows: ['24h'],

    async submit(batch, target, http) {
      const requests = batch.lines.map((line) => ({ custom_id: line.customId, params: line.body }));
      return stateOf(await http.json(request('POST', '/messages/batches', target, batch.headers, { requests })));
    },

    async poll(id, target, http) {
      return stateOf(await http.json(request('GET', path(id), target)));
    },

    async *results(state, target, http): AsyncIterable<NativeBatchResult> {
      for await (const line of http.lines(request('GET', path(state.id, '/results'), target))) {
        const result = resultOf(parseResultLine(line));
        if (result) yield result;
      }
    },

    async cancel(id, target, http) {
      await http.json(request('POST', path(id, '/cancel'), target));
    },
  };
}

/** `in_progress`, `canceling`, or `ended` (cancelled when a cancel was initiated, else completed: its results say which requests expired). */
function stateOf(batch: Record<string, unknown>): NativeBatchState {
  const ended = batch.processing_status === 'ended';
  const cancelled = typeof batch.cancel_initiated_at === 'string';
  const status = ended ? (cancelled ? 'cancelled' : 'completed') : batch.processing_status === 'canceling' ? 'cancelling' : 'in_progress';
  const counts = isObject(batch.request_counts) ? batch.request_counts : null;
  const count = (name: string) => (counts && typeof counts[name] === 'number' ? counts[name] : 0);
  const failed = count('errored') + count('canceled') + count('expired');
  const progress = counts ? { succeeded: count('succeeded'), failed, total: count('processing') + count('succeeded') + failed } : null;
  return { id: String(batch.id), status, errors: null, resultFiles: [], progress };
}

function resultOf(line: Record<string, unknown> | null): NativeBatchResult | null {
  const customId = stringOf(line?.custom_id);
  if (!line || customId === null || !isObject(line.result)) return null;
  const result = line.result;
  const none = { customId, body: null, requestId: null, error: null, resultId: null, statusCode: null };
  switch (result.type) {
    case 'succeeded':
      return { ...none, status: 'succeeded', statusCode: 200, body: result.message ?? null };
    case 'errored': {
      // `{type: "error", error: {type, message}, request_id}`, as the synchronous call's error answer.
      const error = isObject(result.error) ? result.error : null;
      const type = isObject(error?.error) ? stringOf(error.error.type) : null;
      return { ...none, status: 'failed', statusCode: ERROR_STATUS[type ?? ''] ?? 500, body: error, requestId: stringOf(error?.request_id) };
    }
    case 'expired':
      return { ...none, status: 'expired' };
    case 'canceled':
      return { ...none, status: 'cancelled' };
    default:
      return null;
  }
}
