/**
 * Google's Gemini API in the mock upstream (mock-upstream.ts hands every request here first;
 * `serveGemini` answers true when it served it).
 *
 * Routes (under /v1beta or /v1): POST /models/{model}:generateContent and
 * POST /models/{model}:streamGenerateContent (with `?alt=sse`: `data: <json>\r\n\r\n` events,
 * as Google sends them; without it one JSON array of the chunks). The model comes from the path.
 *   - `x-goog-api-key` (or `?key=`) required: 403 PERMISSION_DENIED otherwise; errors in Google's
 *     shape {error: {code, message, status}}
 *   - body checks: JSON, `contents` a non-empty array, top-level fields Gemini knows (else 400
 *     INVALID_ARGUMENT `Invalid JSON payload received. Unknown name "<field>": Cannot find field.`)
 *
 * Replies: {candidates: [{content: {role: "model", parts}, finishReason: "STOP", index: 0}],
 * usageMetadata {promptTokenCount, candidatesTokenCount, totalTokenCount[, thoughtsTokenCount]},
 * modelVersion, responseId}
 *   - text "Hello from mock", or the rest of the last user text when it starts with "echo:"
 *   - functionDeclarations and a last user text mentioning "weather" (the last user turn not a
 *     functionResponse): a `functionCall` part {name: the first declaration, args {location: "Paris"}}
 *   - usage: prompt = ceil(chars of systemInstruction + contents texts / 4) (min 1), candidates =
 *     words of the text (function call: 5); thinkingConfig.thinkingBudget > 0: thoughtsTokenCount 5
 *   - stream: a chunk per word (running usageMetadata in each, finishReason on the last); a function
 *     call in one chunk
 *
 * Switches by model name (see mock-upstream.ts), errors in Google's shape: mock-error-<status>,
 * mock-slow-<ms>, mock-hang, mock-drop, mock-invalid-json, mock-stream-cut (two chunks, then the
 * socket goes), mock-malformed-chunk (one chunk, then a `data:` that is not JSON, then the end).
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { splitWords } from './mock-openai-chunks';
import { streamEvents } from './mock-sse';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { behaviourOf, dropConnection, sendJson } from './mock-upstream';

const ROUTE = /^\/(?:v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const KNOWN_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};
const NO_KEY_MESSAGE =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

function sendGoogleError(res: http.ServerResponse, code: number, message: string): void {
  sendJson(res, code, JSON.stringify({ error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN' } }));
}

export function serveGemini(res: http.ServerResponse, call: MockCall): boolean {
  const route = ROUTE.exec(call.path);
  if (!route || call.method !== 'POST') return false;
  const model = decodeURIComponent(route[1]);
  const query = new URLSearchParams(call.rawQuery);
  const apiKey = call.headers['x-goog-api-key'] ?? query.get('key');
  if (typeof apiKey !== 'string' || !apiKey) sendGoogleError(res, 403, NO_KEY_MESSAGE);
  else if (call.badJson || typeof call.body !== 'object' || call.body === null) sendGoogleError(res, 400, 'Invalid JSON payload received.');
  else {
    const unknown = Object.keys(call.body).find((field) => !KNOWN_FIELDS.has(field));
    if (unknown) sendGoogleError(res, 400, `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
    else if (!Array.isArray(call.body.contents) || call.body.contents.length === 0) sendGoogleError(res, 400, '* GenerateContentRequest.contents: contents is not specified');
    else answer(res, call, model, route[2] === 'streamGenerateContent', query.get('alt') === 'sse');
  }
  return true;
}

const partsText = (parts: any[] | undefined) => (parts ?? []).filter((part) => typeof part?.text === 'string').map((part) => part.text).join('');

function answer(res: http.ServerResponse, call: MockCall, model: string, stream: boolean, sse: boolean): void {
  const body = call.body;
  const behaviour = behaviourOf(model.slice(model.lastIndexOf('/') + 1));
  if (behaviour.hang) return;
  if (behaviour.drop) return dropConnection(res);
  if (behaviour.errorStatus) return sendGoogleError(res, behaviour.errorStatus, `Mock error (status ${behaviour.errorStatus})`);
  if (behaviour.invalidJson) return sendJson(res, 200, '{"candidates": [ this is not JSON');

  const userTurns = body.contents.filter((content: any) => content?.role !== 'model');
  const lastUser = userTurns[userTurns.length - 1];
  const lastText = partsText(lastUser?.parts);
  const answeredFunction = (lastUser?.parts ?? []).some((part: any) => part?.functionResponse);
  const declarations = (body.tools ?? []).flatMap((tool: any) => tool?.functionDeclarations ?? []);
  const allText = partsText(body.systemInstruction?.parts) + body.contents.map((content: any) => JSON.stringify(content.parts ?? [])).join('');
  const promptTokenCount = Math.max(1, Math.ceil(allText.length / 4));
  const thoughts = body.generationConfig?.thinkingConfig?.thinkingBudget > 0 ? 5 : 0;
  const responseId = randomBytes(12).toString('base64url');
  const usage = (candidates: number) => ({
    promptTokenCount,
    candidatesTokenCount: candidates,
    totalTokenCount: promptTokenCount + candidates + thoughts,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  });
  const chunk = (parts: any[], candidates: number, last: boolean) => ({
    candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    usageMetadata: usage(candidates),
    modelVersion: model,
    responseId,
  });

  let chunks: Record<string, unknown>[];
  if (declarations.length && /weather/i.test(lastText) && !answeredFunction) {
    chunks = [chunk([{ functionCall: { name: declarations[0].name, args: { location: 'Paris' } } }], 5, true)];
  } else {
    const text = lastText.startsWith('echo:') ? lastText.slice(5).trim() : 'Hello from mock';
    const words = splitWords(text);
    chunks = stream ? words.map((word, i) => chunk([{ text: word }], i + 1, i === words.length - 1)) : [chunk([{ text }], words.length, true)];
  }

  if (!stream) {
    const reply = () => sendJson(res, 200, JSON.stringify(chunks[0]));
    if (behaviour.delayMs === 0) return reply();
    const timer = setTimeout(reply, behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
    return;
  }
  if (!sse) return sendJson(res, 200, JSON.stringify(chunks));
  let frames = chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);
  if (model === 'mock-malformed-chunk') frames = [frames[0], 'data: {"candidates": [ this is not JSON\r\n\r\n'];
  if (behaviour.streamCut) return streamEvents(res, frames.slice(0, 2), behaviour, true);
  streamEvents(res, frames, behaviour);
}
