import { randomBytes } from 'node:crypto';
import type { ResourceCapability } from '../provider-adapter';
import type { ProviderTarget } from '../provider-target';
import {
  isObject,
  parseResultLine,
  stringOf,
  type BatchHttp,
  type NativeBatchApi,
  type NativeBatchResult,
  type NativeBatchState,
  type NativeBatchStatus,
  type NativeBatchSubmission,
} from '../native-batches';

/** How an OpenAI-format vendor's Batch API is reached. */
export interface OpenAIBatchResources {
  /** Its Files API (`/files`): the lines go up as a JSONL file with purpose "batch"; the results come back as files. */
  files: ResourceCapability;
  /** Its Batch API (`/batches`). */
  batches: ResourceCapability;
  /**
   * Azure OpenAI writes a batch's endpoint and its lines' `url` without `/v1`
   * (`/chat/completions`), and a line's `model` names the deployment: the target's
   * `provider_options.deployment` when it sets one, as on a synchronous call.
   */
  azure?: boolean;
}

/** OpenAI's metadata holds at most 16 pairs. */
const MAX_METADATA_KEYS = 16;
/** The metadata key naming the gateway's batch at the provider (when the client left room for it). */
export const GATEWAY_BATCH_METADATA_KEY = 'gateway_batch_id';

const STATUSES: readonly NativeBatchStatus[] = ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'];

/**
 * OpenAI's Batch API (and Azure OpenAI's, the same under `/openai/…?api-version=`): the
 * lines are uploaded as a JSONL file (purpose "batch"), then the batch is created on it with
 * the client's endpoint, window and metadata. Its results are the output file (the 2xx
 * answers) and the error file (the others, and the requests it never ran), read line by line.
 */
export function openAIBatches(resources: OpenAIBatchResources): NativeBatchApi {
  const endpointOf = (endpoint: string) => (resources.azure ? endpoint.replace(/^\/v1\//, '/') : endpoint);
  return {
    shape: 'openai',
    windows: ['24h'],

    async submit(batch: NativeBatchSubmission, target: ProviderTarget, http: BatchHttp): Promise<NativeBatchState> {
      const url = endpointOf(batch.endpoint);
      const deployment = resources.azure ? target.providerOptions.deployment : undefined;
      const jsonl = batch.lines
        .map((line) => JSON.stringify({ custom_id: line.customId, method: 'POST', url, body: deployment ? { ...line.body, model: deployment } : line.body }))
        .join('\n');
      const form = multipartForm({ purpose: 'batch' }, { field: 'file', filename: `${batch.gatewayBatchId}.jsonl`, content: Buffer.from(`${jsonl}\n`) });
      const upload = resources.files.request('POST', '', '', target);
      const file = await http.json({ ...upload, headers: { ...upload.headers, 'content-type': form.contentType }, body: form.body });
      const fileId = String(file.id);
      try {
        const created = await http.json(
          resources.batches.request('POST', '', '', target, {
            input_file_id: fileId,
            endpoint: url,
            completion_window: batch.completionWindow,
            metadata: withGatewayId(batch.metadata, batch.gatewayBatchId),
          }),
        );
        return stateOf(created);
      } catch (error) {
        // The batch was refused: its input file would only take room at the provider.
        await http.json(resources.files.request('DELETE', `/${encodeURIComponent(fileId)}`, '', target)).catch(() => undefined);
        throw error;
      }
    },

    async poll(id, target, http) {
      return stateOf(await http.json(resources.batches.request('GET', `/${encodeURIComponent(id)}`, '', target)));
    },

    async *results(state, target, http): AsyncIterable<NativeBatchResult> {
      for (const fileId of state.resultFiles) {
        for await (const line of http.lines(resources.files.request('GET', `/${encodeURIComponent(fileId)}/content`, '', target))) {
          const result = resultOf(parseResultLine(line));
          if (result) yield result;
        }
      }
    },

    async cancel(id, target, http) {
      await http.json(resources.batches.request('POST', `/${encodeURIComponent(id)}/cancel`, '', target));
    },
  };
}

/** The client's metadata, plus the gateway's batch id where the 16 pairs leave room (null stays null when there is none). */
function withGatewayId(metadata: Record<string, string> | null, gatewayBatchId: string): Record<string, string> | null {
  const pairs = metadata ?? {};
  if (Object.keys(pairs).length >= MAX_METADATA_KEYS || GATEWAY_BATCH_METADATA_KEY in pairs) return metadata;
  return { ...pairs, [GATEWAY_BATCH_METADATA_KEY]: gatewayBatchId };
}

function stateOf(batch: Record<string, unknown>): NativeBatchState {
  const status = STATUSES.find((known) => known === batch.status) ?? 'in_progress';
  const errors = isObject(batch.errors) && Array.isArray(batch.errors.data) ? (batch.errors.data as NativeBatchState['errors']) : null;
  const resultFiles = [stringOf(batch.output_file_id), stringOf(batch.error_file_id)].filter((id): id is string => !!id);
  const counts = isObject(batch.request_counts) ? batch.request_counts : null;
  const progress =
    counts && typeof counts.total === 'number' ? { succeeded: Number(counts.completed) || 0, failed: Number(counts.failed) || 0, total: counts.total } : null;
  return { id: String(batch.id), status, errors, resultFiles, progress };
}

/**
 * One line of an output or error file: `{id, custom_id, response: {status_code, request_id,
 * body}, error}`. A request that answered has its `response`; one that never ran, an `error`
 * (`batch_expired` when the window ended first).
 */
function resultOf(line: Record<string, unknown> | null): NativeBatchResult | null {
  const customId = stringOf(line?.custom_id);
  if (!line || customId === null) return null;
  const resultId = stringOf(line.id);
  const response = line.response;
  if (isObject(response) && typeof response.status_code === 'number') {
    const statusCode = response.status_code;
    return {
      customId,
      status: statusCode >= 200 && statusCode < 300 ? 'succeeded' : 'failed',
      statusCode,
      body: response.body ?? null,
      requestId: stringOf(response.request_id),
      error: null,
      resultId,
    };
  }
  const error = isObject(line.error) ? { code: String(line.error.code), message: String(line.error.message), ...line.error } : null;
  return {
    customId,
    status: error?.code === 'batch_expired' ? 'expired' : 'errored',
    statusCode: null,
    body: null,
    requestId: null,
    error: error ?? { code: 'no_response', message: 'The provider gave this request no response' },
    resultId,
  };
}

/** A multipart/form-data body of text fields and one file. */
function multipartForm(fields: Record<string, string>, file: { field: string; filename: string; content: Buffer }): { contentType: string; body: Buffer } {
  const boundary = `----gateway-batch-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: application/jsonl\r\n\r\n`,
    ),
    file.content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
