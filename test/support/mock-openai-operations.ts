/**
 * The mock upstream's embeddings and image generation routes, in OpenAI's wire format.
 * `mock-upstream.ts` dispatches POSTs here (`serveOpenAIOperation`), so requests are
 * recorded and the mock-flaky-* counters kept and reset with the rest.
 *
 * Routes
 *   POST /v1/embeddings, /embeddings
 *   POST /v1/images/generations, /images/generations
 *   POST /openai/deployments/{deployment}/embeddings?api-version=...          (Azure OpenAI)
 *   POST /openai/deployments/{deployment}/images/generations?api-version=...
 *
 * Replies
 *   embeddings: {object: "list", data: [{object: "embedding", index, embedding}], model, usage}
 *     - one unit-length vector per input, a function of the model and that input alone;
 *       `dimensions` long (default 1536, 3072 for text-embedding-3-large)
 *     - floats, or with encoding_format "base64" (the SDK's default) their little-endian
 *       float32 bytes in base64
 *     - usage {prompt_tokens, total_tokens}: ceil(chars / 4) (min 1) per string, the
 *       length of each token array
 *   images: {created, data: [n items]}
 *     - gpt-image-* models: b64_json (a 1x1 PNG) and usage {input_tokens: ceil(prompt chars
 *       / 4), output_tokens: per image by quality (low 272, medium or auto 1056, high 4160),
 *       total_tokens, input_tokens_details}, with background, output_format, quality, size
 *     - other models (dall-e-2, dall-e-3): url, or b64_json with response_format b64_json;
 *       dall-e-3 adds revised_prompt
 *
 * Behaviour switches, by model name as for chat (see mock-upstream.ts): mock-error-<status>,
 * mock-slow-<ms>, mock-flaky-<n>-<status> (counted per model and input or prompt),
 * mock-invalid-json, mock-hang, mock-drop (mock-stream-empty drops too: nothing streams here).
 */
import type * as http from 'node:http';
import { BAD_JSON_BODY, AZURE_MISSING_API_VERSION_BODY, INVALID_JSON_REPLY, MISSING_MODEL_BODY, errorBody } from './mock-openai-chunks';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, sendError, sendJson } from './mock-upstream';

type Operation = 'embeddings' | 'images';

const PATHS: Record<string, Operation> = {
  '/v1/embeddings': 'embeddings',
  '/embeddings': 'embeddings',
  '/v1/images/generations': 'images',
  '/images/generations': 'images',
};
const AZURE_PATH = /^\/openai\/deployments\/([^/]+)\/(embeddings|images\/generations)$/;

/** The input (embeddings) or prompt (images) that a request is about: required, and the flaky counters' key. */
const SUBJECT = { embeddings: 'input', images: 'prompt' } as const;

/** A 1x1 transparent PNG, what every b64_json image is. */
export const MOCK_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** Output tokens per GPT Image image, by quality (OpenAI's counts for 1024x1024). */
const IMAGE_OUTPUT_TOKENS: Record<string, number> = { low: 272, medium: 1056, auto: 1056, high: 4160 };

let sequence = 0;

/** Serves the request when `path` is one of these routes; false otherwise (the caller goes on). */
export function serveOpenAIOperation(
  res: http.ServerResponse,
  path: string,
  rawQuery: string,
  body: any,
  badJson: boolean,
  flakyFailures: Map<string, number>,
): boolean {
  const azure = AZURE_PATH.exec(path);
  const operation = azure ? (azure[2] === 'embeddings' ? 'embeddings' : 'images') : PATHS[path];
  if (!operation) return false;
  if (azure && !new URLSearchParams(rawQuery).has('api-version')) sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
  else serve(res, operation, body, badJson, flakyFailures, azure ? decodeURIComponent(azure[1]) : undefined);
  return true;
}

function serve(res: http.ServerResponse, operation: Operation, body: any, badJson: boolean, flakyFailures: Map<string, number>, deployment?: string): void {
  if (badJson || body === null || typeof body !== 'object' || Array.isArray(body)) return sendJson(res, 400, BAD_JSON_BODY);
  const model: string | undefined = typeof body.model === 'string' && body.model ? body.model : deployment;
  if (!model) return sendJson(res, 400, MISSING_MODEL_BODY);
  const subject = SUBJECT[operation];
  if (body[subject] === undefined) {
    return sendJson(res, 400, errorBody(`Missing required parameter: '${subject}'.`, 'invalid_request_error', 'missing_required_parameter', subject));
  }

  const behaviour = behaviourOf(model.slice(model.lastIndexOf('/') + 1));
  const flakyKey = () => model + '\u0000' + JSON.stringify(body[subject]);
  const replies = { error: (status: number, headers?: Record<string, string>) => sendError(res, status, headers), invalidJson: INVALID_JSON_REPLY };
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: flakyFailures, flakyKey }, replies)) return;

  const reply = () => sendJson(res, 200, operation === 'embeddings' ? embeddingsBody(body, model) : imagesBody(body, model));
  if (behaviour.delayMs === 0) return reply();
  const timer = setTimeout(reply, behaviour.delayMs);
  res.once('close', () => clearTimeout(timer));
}

const textTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function embeddingsBody(body: any, model: string): string {
  const input = body.input;
  // A string or one token array is one input; otherwise each element is.
  const inputs: unknown[] = typeof input === 'string' || typeof input[0] === 'number' ? [input] : input;
  const dimensions = Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : model.includes('-large') ? 3072 : 1536;
  const base64 = body.encoding_format === 'base64';
  let tokens = 0;
  const data = inputs.map((item, index) => {
    tokens += typeof item === 'string' ? textTokens(item) : (item as unknown[]).length;
    const vector = unitVector(model + '\u0000' + JSON.stringify(item), dimensions);
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector) };
  });
  return JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

/** A unit-length vector drawn from a generator seeded with `seed` (the same seed, the same vector). */
function unitVector(seed: string, dimensions: number): Float32Array {
  let state = 2166136261; // FNV-1a of the seed, then a linear congruential generator
  for (let i = 0; i < seed.length; i++) state = Math.imul(state ^ seed.charCodeAt(i), 16777619) >>> 0;
  const vector = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    vector[i] = state / 2 ** 31 - 1;
    norm += vector[i] * vector[i];
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] *= scale;
  return vector;
}

function imagesBody(body: any, model: string): string {
  const n = Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
  const created = Math.floor(Date.now() / 1000);
  if (model.startsWith('gpt-image')) {
    const quality = IMAGE_OUTPUT_TOKENS[body.quality] ? body.quality : 'auto';
    const inputTokens = textTokens(String(body.prompt));
    const outputTokens = n * IMAGE_OUTPUT_TOKENS[quality];
    return JSON.stringify({
      created,
      background: body.background ?? 'opaque',
      data: Array.from({ length: n }, () => ({ b64_json: MOCK_PNG_BASE64 })),
      output_format: body.output_format ?? 'png',
      quality: quality === 'auto' ? 'medium' : quality,
      size: body.size && body.size !== 'auto' ? body.size : '1024x1024',
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { image_tokens: 0, text_tokens: inputTokens },
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
    });
  }
  const id = (++sequence).toString(36);
  const data = Array.from({ length: n }, (_, i) => ({
    ...(body.response_format === 'b64_json' ? { b64_json: MOCK_PNG_BASE64 } : { url: `https://mock-upstream.invalid/images/img-${id}-${i}.png` }),
    ...(model.startsWith('dall-e-3') ? { revised_prompt: String(body.prompt) } : {}),
  }));
  return JSON.stringify({ created, data });
}
