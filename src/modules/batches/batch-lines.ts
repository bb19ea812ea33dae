import { GatewayError } from '../../common/errors/gateway-error';

/**
 * A line's state: `pending` until an instance leases it, `sending` while it runs there, then
 * `succeeded` (2xx), `failed` (answered with an error), `errored` (never sent: malformed,
 * the budget reached, interrupted), `expired` (the completion window ended first) or
 * `cancelled`.
 */
export type LineStatus = 'pending' | 'sending' | 'succeeded' | 'failed' | 'errored' | 'expired' | 'cancelled';

/** A line as a batch is created with it: its body, or why it cannot run. */
export interface NewLine {
  customId: string;
  body: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  /** Its line in the input file (OpenAI's shape, counting from 1); null for Anthropic's inline requests. */
  inputLine?: number | null;
}

/** The endpoints a batch line may call, in each shape. */
export const OPENAI_BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'] as const;
export const ANTHROPIC_BATCH_ENDPOINT = '/v1/messages';

/** OpenAI's and Anthropic's own limits on a batch's lines. */
export const MAX_OPENAI_LINES = 50_000;
export const MAX_ANTHROPIC_REQUESTS = 100_000;

const CUSTOM_ID_MAX = 512;

/**
 * An OpenAI batch input file (JSONL of `{custom_id, method, url, body}`) to lines. A line
 * that cannot run (not JSON, no custom_id, another endpoint, a streamed body) fails by
 * itself, in the error file; the whole batch is refused (400 naming the problem) only for
 * what OpenAI refuses at creation: no lines, too many, a duplicate `custom_id`.
 */
export function parseOpenAiInput(content: Buffer, endpoint: string): NewLine[] {
  const lines: NewLine[] = [];
  const seen = new Map<string, number>();
  const text = content.toString('utf8');
  let number = 0;
  for (const raw of text.split('\n')) {
    number++;
    if (!raw.trim()) continue;
    if (lines.length === MAX_OPENAI_LINES)
      throw GatewayError.invalidRequest(`The input file has more than ${MAX_OPENAI_LINES} lines`, 'input_file_id', 'too_many_lines');
    const line = { ...parseLine(raw, number, endpoint), inputLine: number };
    const earlier = seen.get(line.customId);
    if (earlier !== undefined && line.body)
      throw GatewayError.invalidRequest(
        `The custom_id '${line.customId}' is on lines ${earlier} and ${number}: each line needs its own`,
        'input_file_id',
        'duplicate_custom_id',
      );
    if (line.body) seen.set(line.customId, number);
    lines.push(line);
  }
  if (!lines.length) throw GatewayError.invalidRequest('The input file has no lines', 'input_file_id', 'empty_file');
  return lines;
}

function parseLine(raw: string, number: number, endpoint: string): NewLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return invalid(`line-${number}`, `Line ${number} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid(`line-${number}`, `Line ${number} is not a JSON object`);
  const line = value as Record<string, unknown>;
  const customId = line.custom_id;
  if (typeof customId !== 'string' || !customId || customId.length > CUSTOM_ID_MAX)
    return invalid(`line-${number}`, `Line ${number} has no custom_id (a string of 1 to ${CUSTOM_ID_MAX} characters)`);
  if (line.method !== 'POST') return invalid(customId, `Line ${number}: method must be "POST"`);
  if (line.url !== endpoint) return invalid(customId, `Line ${number}: url ${JSON.stringify(line.url)} is not the batch's endpoint ${endpoint}`);
  const body = line.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid(customId, `Line ${number}: body must be a JSON object`);
  if ((body as Record<string, unknown>).stream === true) return invalid(customId, `Line ${number}: a batch line cannot stream (stream: true)`);
  return { customId, body: body as Record<string, unknown>, error: null };
}

/**
 * Anthropic's inline `requests` (`{custom_id, params}`) to lines. What Anthropic refuses at
 * creation is a 400 naming it (no requests, too many, a custom_id not of 1-64 letters,
 * digits, `_` or `-`, a duplicate, params not an object or streamed); the params are
 * otherwise checked as the line runs, like any request to /v1/messages.
 */
export function parseAnthropicRequests(requests: unknown): NewLine[] {
  if (!Array.isArray(requests) || !requests.length) throw GatewayError.invalidRequest('requests: must be a non-empty array', 'requests');
  if (requests.length > MAX_ANTHROPIC_REQUESTS)
    throw GatewayError.invalidRequest(`requests: at most ${MAX_ANTHROPIC_REQUESTS} requests per batch`, 'requests', 'too_many_requests');
  const seen = new Set<string>();
  return requests.map((request: unknown, i) => {
    const { custom_id: customId, params } = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    if (typeof customId !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(customId))
      throw GatewayError.invalidRequest(`requests.${i}.custom_id: must be 1 to 64 letters, digits, _ or -`, `requests.${i}.custom_id`);
    if (seen.has(customId))
      throw GatewayError.invalidRequest(
        `requests.${i}.custom_id: '${customId}' is used by another request of the batch`,
        `requests.${i}.custom_id`,
        'duplicate_custom_id',
      );
    seen.add(customId);
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      throw GatewayError.invalidRequest(`requests.${i}.params: must be a Messages request object`, `requests.${i}.params`);
    if ((params as Record<string, unknown>).stream === true)
      throw GatewayError.invalidRequest(`requests.${i}.params.stream: a batch request cannot stream`, `requests.${i}.params.stream`);
    return { customId, body: params as Record<string, unknown>, error: null };
  });
}

function invalid(customId: string, message: string): NewLine {
  return { customId, body: null, error: { code: 'invalid_line', message } };
}
