/**
 * Google's Gemini API in the mock upstream (mock-upstream.ts hands every request here first;
 * `serveGemini` answers true when it served it). Checks and chunks are built by mock-gemini-body.ts.
 *
 * Routes (under /v1beta or /v1; anything else is left to the other routes):
 *   POST /v1beta/models/{model}:generateContent        one GenerateContentResponse
 *   POST /v1beta/models/{model}:streamGenerateContent  with `?alt=sse`: `data: <json>\r\n\r\n` events,
 *        as Google sends them (no event names, no [DONE]); without it one JSON array of the same
 *        chunks, written piece by piece ("[" chunk ",\r\n" chunk … "]") with content-type JSON
 *   POST /v1beta/models/{model}:countTokens  {totalTokens, promptTokensDetails}: `contents`, or a
 *        `generateContentRequest` (with its `model`; checked as generateContent's body), never both;
 *        totalTokens = the promptTokenCount generateContent would give, plus the JSON of `tools` / 4
 *   POST /v1beta/models/{model}:embedContent  {content: {parts: [{text}]}, taskType?, title?,
 *        outputDimensionality?, model?} → {embedding: {values: mockEmbeddingValues(text, dims)}}, no
 *        usage; a `model`, when sent, must be "models/{model}"
 *   POST /v1beta/models/{model}:batchEmbedContents  {requests: [{model, content: {parts: [{text}]},
 *        outputDimensionality?, taskType?}]} → {embeddings: [{values: mockEmbeddingValues(text)}]}, no usage
 *        (both: an unknown field is 400 INVALID_ARGUMENT "Invalid JSON payload received. Unknown name …")
 *   GET  /v1beta/models          Google's native ListModels: {models: GEMINI_MODELS (name "models/…",
 *        version, displayName, description, inputTokenLimit, outputTokenLimit,
 *        supportedGenerationMethods, …)[, nextPageToken]}, paged by `pageSize` (default 50, at most
 *        1000) and the `pageToken` of the page before (an unknown token: 400 INVALID_ARGUMENT)
 *   GET  /v1beta/models/{model}  one of them ("models/" optional in {model}), else 404 NOT_FOUND
 *        (only under /v1beta: /v1/models is OpenAI's and Anthropic's)
 *   GET  /v1beta/openai/models, …/models/{id}  the OpenAI-compatible model list (GEMINI_OPENAI_MODELS),
 *        the key as `Authorization: Bearer` (403 PERMISSION_DENIED without)
 *   The model comes from the path (URL-decoded), never from the body.
 *   - `x-goog-api-key` header (or `?key=`) required on every route but the OpenAI-compatible one:
 *     403 PERMISSION_DENIED "Method doesn't allow unregistered callers …" otherwise
 *   - errors in Google's shape {error: {code, message, status}} (status INVALID_ARGUMENT,
 *     UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE,
 *     DEADLINE_EXCEEDED by code)
 *   - body checks, 400 INVALID_ARGUMENT: JSON; top-level fields of GenerateContentRequest only
 *     (contents, systemInstruction, tools, toolConfig, generationConfig, safetySettings,
 *     cachedContent, model; lowerCamel or snake_case as Google's proto parser takes both), else
 *     `Invalid JSON payload received. Unknown name "<field>": Cannot find field.`; the same for
 *     generationConfig's fields (… Unknown name "<field>" at 'generation_config': …); `contents`
 *     non-empty, roles user | model, every content with parts; function declarations named
 *
 * Replies: {candidates: [{content: {parts, role: "model"}, finishReason, index: 0}],
 * usageMetadata {promptTokenCount, candidatesTokenCount, totalTokenCount, promptTokensDetails
 * [, thoughtsTokenCount]}, modelVersion: the model, responseId}
 *   - text "Hello from mock", or the rest of the last user text (the text parts of the last
 *     content that is not the model's) trimmed, when it starts with "echo:"; finishReason "STOP"
 *     (also when cut before the earliest of generationConfig.stopSequences), or "MAX_TOKENS" when
 *     cut after maxOutputTokens words
 *   - functionDeclarations and a last user text mentioning "weather" (the last content not a
 *     functionResponse, toolConfig.functionCallingConfig.mode not NONE): one part
 *     {functionCall: {name: the first declaration or the first allowedFunctionNames, args
 *     {location: "Paris"}}}, finishReason "STOP" as Gemini sends it
 *   - a tool script (the last user content without functionResponse parts starts with "tools:";
 *     syntax in mock-tool-script.ts): round r (the model contents with functionCall parts after it)
 *     answers step r's calls as functionCall parts {functionCall: {name, args}} (no id, as Gemini
 *     sends none; a step of several calls: several parts of one content, whole in one chunk when
 *     streamed), finishReason "STOP"; a function not declared (or mode NONE): text "no tool
 *     <name>". After the last step: text "results: " + the functionResponse responses after that
 *     user content (its `output`, `content` or `result` when a string, else the response as JSON), joined
 *     by " / "
 *   - generationConfig.candidateCount n > 1: n identical candidates (index 0…n-1)
 *   - usage: promptTokenCount = ceil(chars of systemInstruction + contents texts, function calls
 *     and responses / 4) (min 1), candidatesTokenCount = words of the text (function calls: their
 *     args' JSON fragments, 5 for {"location":"Paris"}) × n,
 *     thinkingConfig.thinkingBudget > 0: thoughtsTokenCount 5, totalTokenCount the sum; with
 *     thinkingConfig.includeThoughts too, a first part {text: THOUGHT_SUMMARY, thought: true}
 *     (streamed: in a chunk of its own)
 *   - stream: one chunk per word (parts [{text: word with its leading space}]), each a whole
 *     GenerateContentResponse with the running usageMetadata, finishReason only on the last; a
 *     function call comes whole in one chunk
 *
 * Behaviour switches by model name (see mock-upstream.ts), errors in Google's shape:
 * mock-error-<status>, mock-slow-<ms>, mock-hang, mock-drop, mock-flaky-<n>-<status> (counted per
 * model and last user text), mock-invalid-json, mock-stream-empty, and
 *   mock-retry-after-<ms>  429 RESOURCE_EXHAUSTED whose details hold a google.rpc.RetryInfo with
 *                          retryDelay "<seconds>s" (Google sends no retry-after header)
 *   mock-stream-cut        stream: the first two chunks, then the socket goes
 *   mock-malformed-chunk   stream: the first chunk, then one that is not JSON, then the end
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { geminiChunks, invalidRequest, planGemini } from './mock-gemini-body';
import { dropAfterHeaders, streamEvents } from './mock-sse';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, sendJson } from './mock-upstream';

const ROUTE = /^\/(?:v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/;

/**
 * The mock's embedding of a text: `dimensions` (default 8) numbers that depend on the text and
 * are exact in float32 (multiples of 1/64), so a base64 answer decodes to the same numbers.
 */
export function mockEmbeddingValues(text: string, dimensions = 8): number[] {
  let sum = 0;
  for (const char of text) sum += char.codePointAt(0)!;
  return Array.from({ length: dimensions }, (_, i) => (((sum + i * 37) % 129) - 64) / 64);
}

/** gemini-embedding-001's largest output (3072 dimensions). */
const MAX_EMBEDDING_DIMENSIONS = 3072;
const EMBED_REQUEST_FIELDS = new Set(['model', 'content', 'taskType', 'task_type', 'title', 'outputDimensionality', 'output_dimensionality']);

/**
 * `batchEmbedContents`: `{requests: [{model: "models/{model}", content: {parts: [{text}]}, taskType?, outputDimensionality?}]}`
 * → `{embeddings: [{values}]}` (no usage, as Google answers); each request's model must be the path's.
 */
function batchEmbed(res: http.ServerResponse, call: MockCall, model: string): void {
  const body = call.body ?? {};
  const extra = Object.keys(body).find((name) => name !== 'requests');
  if (extra) return sendGoogleError(res, 400, `Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`);
  if (!Array.isArray(body.requests) || body.requests.length === 0)
    return sendGoogleError(res, 400, '* BatchEmbedContentsRequest.requests: contents is not specified');
  const values: number[][] = [];
  for (const [i, request] of body.requests.entries()) {
    const unknown = Object.keys(request ?? {}).find((name) => !EMBED_REQUEST_FIELDS.has(name));
    if (unknown) return sendGoogleError(res, 400, `Invalid JSON payload received. Unknown name "${unknown}" at 'requests[${i}]': Cannot find field.`);
    if (request.model !== `models/${model}`) return sendGoogleError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].model: unexpected model name format`);
    const parts = request.content?.parts;
    if (!Array.isArray(parts) || parts.length === 0 || !parts.every((part: any) => typeof part?.text === 'string')) {
      return sendGoogleError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].content.parts: contents is not specified`);
    }
    const dimensions = request.outputDimensionality ?? request.output_dimensionality;
    if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_EMBEDDING_DIMENSIONS))
      return sendGoogleError(res, 400, `* requests[${i}].output_dimensionality: must be from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
    values.push(mockEmbeddingValues(parts.map((part: any) => part.text).join(''), dimensions));
  }
  sendJson(res, 200, JSON.stringify({ embeddings: values.map((vector) => ({ values: vector })) }));
}
/** `embedContent`: `{content: {parts: [{text}]}, taskType?, title?, outputDimensionality?, model?}` → `{embedding: {values}}` (no usage). */
function embed(res: http.ServerResponse, call: MockCall, model: string): void {
  const body = call.body ?? {};
  const unknown = Object.keys(body).find((name) => !EMBED_REQUEST_FIELDS.has(name));
  if (unknown) return sendGoogleError(res, 400, `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
  if (body.model !== undefined && body.model !== `models/${model}`)
    return sendGoogleError(res, 400, '* EmbedContentRequest.model: unexpected model name format');
  const parts = body.content?.parts;
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((part: any) => typeof part?.text === 'string')) {
    return sendGoogleError(res, 400, '* EmbedContentRequest.content.parts: contents is not specified');
  }
  const dimensions = body.outputDimensionality ?? body.output_dimensionality;
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_EMBEDDING_DIMENSIONS))
    return sendGoogleError(res, 400, `* output_dimensionality: must be from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
  sendJson(res, 200, JSON.stringify({ embedding: { values: mockEmbeddingValues(parts.map((part: any) => part.text).join(''), dimensions) } }));
}

const NATIVE_MODELS_ROUTE = /^\/v1beta\/models(?:\/([^/:]+))?$/;
const TEXT_METHODS = ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'];
/** Google's native model list (ListModels), in Google's order and shape. */
export const GEMINI_MODELS = [
  {
    name: 'models/gemini-2.5-flash',
    version: '001',
    displayName: 'Gemini 2.5 Flash',
    description: 'Stable version of Gemini 2.5 Flash, our mid-size multimodal model that supports up to 1 million tokens, released in June of 2025.',
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: TEXT_METHODS,
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  },
  {
    name: 'models/gemini-2.5-pro',
    version: '2.5',
    displayName: 'Gemini 2.5 Pro',
    description: 'Stable release (June 17th, 2025) of Gemini 2.5 Pro',
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: TEXT_METHODS,
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  },
  {
    name: 'models/gemini-2.0-flash',
    version: '2.0',
    displayName: 'Gemini 2.0 Flash',
    description: 'Gemini 2.0 Flash',
    inputTokenLimit: 1048576,
    outputTokenLimit: 8192,
    supportedGenerationMethods: TEXT_METHODS,
    temperature: 1,
    topP: 0.95,
    topK: 40,
    maxTemperature: 2,
  },
  {
    name: 'models/gemini-embedding-001',
    version: '001',
    displayName: 'Gemini Embedding 001',
    description: 'Obtain a distributed representation of a text.',
    inputTokenLimit: 2048,
    outputTokenLimit: 1,
    supportedGenerationMethods: ['embedContent', 'countTextTokens', 'countTokens', 'asyncBatchEmbedContent'],
  },
];
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const pageToken = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url');

/** `GET /v1beta/models[/{model}]`: the native list, paged by pageSize / pageToken, or one model. */
function nativeModels(res: http.ServerResponse, call: MockCall, id: string | undefined): boolean {
  const query = new URLSearchParams(call.rawQuery);
  const apiKey = call.headers['x-goog-api-key'] ?? query.get('key');
  if (typeof apiKey !== 'string' || !apiKey) {
    sendGoogleError(res, 403, NO_KEY_MESSAGE);
    return true;
  }
  if (id !== undefined) {
    const name = decodeURIComponent(id).replace(/^models\//, '');
    const model = GEMINI_MODELS.find((candidate) => candidate.name === `models/${name}`);
    if (model) sendJson(res, 200, JSON.stringify(model));
    else sendGoogleError(res, 404, `Model is not found: models/${name} for api version v1beta`);
    return true;
  }
  const size = query.get('pageSize');
  const pageSize = size === null || size === '' || Number(size) === 0 ? DEFAULT_PAGE_SIZE : Math.min(Number(size), MAX_PAGE_SIZE);
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    sendGoogleError(res, 400, `Invalid value at 'page_size' (TYPE_INT32), "${size}"`);
    return true;
  }
  const token = query.get('pageToken');
  let offset = 0;
  if (token) {
    offset = GEMINI_MODELS.findIndex((_, i) => i > 0 && pageToken(i) === token);
    if (offset === -1) {
      sendGoogleError(res, 400, 'Invalid page token.');
      return true;
    }
  }
  const models = GEMINI_MODELS.slice(offset, offset + pageSize);
  const next = offset + pageSize < GEMINI_MODELS.length ? { nextPageToken: pageToken(offset + pageSize) } : {};
  sendJson(res, 200, JSON.stringify({ models, ...next }));
  return true;
}

const OPENAI_MODELS_ROUTE = /^\/(?:v1beta|v1)\/openai\/models(?:\/([^/]+))?$/;
/** The model list of the OpenAI-compatible endpoint; ids as Google's endpoint gives them, no `created`. */
export const GEMINI_OPENAI_MODELS = [
  { id: 'models/gemini-2.5-flash', object: 'model', owned_by: 'google' },
  { id: 'models/gemini-2.5-pro', object: 'model', owned_by: 'google' },
];
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
const MOCK_ERROR_MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  403: 'The caller does not have permission',
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline expired before operation could complete.',
};
const NO_KEY_MESSAGE =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const INVALID_JSON_REPLY = '{"candidates": [ this is not JSON';
const MALFORMED_CHUNK = '{"candidates": [{"content": this is not JSON';

function sendGoogleError(res: http.ServerResponse, code: number, message: string, details?: unknown[]): void {
  sendJson(res, code, JSON.stringify({ error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN', ...(details ? { details } : {}) } }));
}

function sendMockError(res: http.ServerResponse, code: number, model: string): void {
  const message =
    code === 404
      ? `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`
      : (MOCK_ERROR_MESSAGES[code] ?? `Mock error (status ${code})`);
  sendGoogleError(res, code, message);
}

export function serveGemini(res: http.ServerResponse, call: MockCall): boolean {
  const models = call.method === 'GET' ? OPENAI_MODELS_ROUTE.exec(call.path) : null;
  if (models) return openAIModels(res, call, models[1]);
  const native = call.method === 'GET' ? NATIVE_MODELS_ROUTE.exec(call.path) : null;
  if (native) return nativeModels(res, call, native[1]);
  const route = ROUTE.exec(call.path);
  if (!route || call.method !== 'POST') return false;
  const model = decodeURIComponent(route[1]);
  const query = new URLSearchParams(call.rawQuery);
  const apiKey = call.headers['x-goog-api-key'] ?? query.get('key');
  if (typeof apiKey !== 'string' || !apiKey) sendGoogleError(res, 403, NO_KEY_MESSAGE);
  else if (call.badJson) sendGoogleError(res, 400, 'Invalid JSON payload received. Unexpected token.');
  else {
    const invalid = invalidRequest(call.body);
    if (route[2] === 'countTokens') countTokens(res, call, model);
    else if (route[2] === 'batchEmbedContents') batchEmbed(res, call, model);
    else if (route[2] === 'embedContent') embed(res, call, model);
    else if (invalid) sendGoogleError(res, 400, invalid);
    else answer(res, call, model, route[2] === 'streamGenerateContent', query.get('alt') === 'sse');
  }
  return true;
}

/** `countTokens`: `contents`, or a whole `generateContentRequest` (checked as generateContent's body, its `model` required), never both. */
function countTokens(res: http.ServerResponse, call: MockCall, model: string): void {
  const body = call.body ?? {};
  const extra = Object.keys(body).find((name) => !['contents', 'generateContentRequest', 'generate_content_request'].includes(name));
  if (extra) return sendGoogleError(res, 400, `Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`);
  const request = body.generateContentRequest ?? body.generate_content_request;
  if (request && body.contents) return sendGoogleError(res, 400, 'contents and generate_content_request are mutually exclusive.');
  if (request && typeof request.model !== 'string') return sendGoogleError(res, 400, 'generate_content_request.model is required.');
  const counted = request ?? { contents: body.contents };
  const invalid = invalidRequest(counted);
  if (invalid) return sendGoogleError(res, 400, invalid);
  const behaviour = behaviourOf(model.slice(model.lastIndexOf('/') + 1));
  const replies = { error: (status: number) => sendMockError(res, status, model), invalidJson: INVALID_JSON_REPLY };
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: call.flakyFailures, flakyKey: () => 'countTokens\u0000' + model }, replies)) return;
  const tools = request?.tools ? Math.ceil(JSON.stringify(request.tools).length / 4) : 0;
  const totalTokens = planGemini(counted, false).promptTokenCount + tools;
  sendJson(res, 200, JSON.stringify({ totalTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }] }));
}

/** `GET /v1beta/openai/models[/{id}]`: the OpenAI-compatible list, the key as a bearer token. */
function openAIModels(res: http.ServerResponse, call: MockCall, id: string | undefined): boolean {
  const bearer = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''));
  if (!bearer) {
    sendGoogleError(res, 403, NO_KEY_MESSAGE);
    return true;
  }
  if (id === undefined) {
    sendJson(res, 200, JSON.stringify({ object: 'list', data: GEMINI_OPENAI_MODELS }));
    return true;
  }
  const wanted = decodeURIComponent(id).replace(/^models\//, '');
  const model = GEMINI_OPENAI_MODELS.find((candidate) => candidate.id === `models/${wanted}`);
  if (model) sendJson(res, 200, JSON.stringify(model));
  else sendMockError(res, 404, wanted);
  return true;
}

function answer(res: http.ServerResponse, call: MockCall, model: string, stream: boolean, sse: boolean): void {
  const body = call.body;
  const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
  const behaviour = behaviourOf(behaviourModel);
  const flakyKey = () => {
    const lastUser = body.contents.filter((content: any) => content.role !== 'model').at(-1);
    return 'gemini\u0000' + model + '\u0000' + JSON.stringify(lastUser?.parts ?? []);
  };
  const replies = {
    error: (status: number) => sendMockError(res, status, model),
    invalidJson: INVALID_JSON_REPLY,
    // Google sends no retry-after header: the delay is a RetryInfo detail of the error.
    retryAfter: (ms: number) =>
      sendGoogleError(res, 429, MOCK_ERROR_MESSAGES[429], [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${ms / 1000}s` }]),
  };
  if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;
  const plan = planGemini(body, stream);

  const chunks = geminiChunks(plan, model).map((chunk) => JSON.stringify(chunk));
  if (!stream) {
    const send = () => sendJson(res, 200, chunks[0]);
    if (behaviour.delayMs === 0) return send();
    const timer = setTimeout(send, behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
    return;
  }
  if (behaviour.streamEmpty) return dropAfterHeaders(res);
  let pieces = behaviourModel === 'mock-malformed-chunk' ? [chunks[0], MALFORMED_CHUNK] : chunks;
  const cut = behaviour.streamCut === true;
  if (cut) pieces = pieces.slice(0, 2);
  if (sse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    return streamEvents(
      res,
      pieces.map((chunk) => `data: ${chunk}\r\n\r\n`),
      behaviour,
      cut,
    );
  }
  // Without alt=sse: one JSON array, sent as the chunks come.
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  const array = pieces.map((chunk, i) => (i === 0 ? '[' : ',\r\n') + chunk);
  streamEvents(res, cut ? array : [...array.slice(0, -1), array[array.length - 1] + ']'], behaviour, cut);
}
