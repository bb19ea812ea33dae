/**
 * The mock upstream's speech route, in OpenAI's wire format: a JSON body in, audio
 * bytes out, written in 16 KiB chunks one timer tick apart (chunked transfer, as OpenAI
 * streams audio while it synthesises it).
 *
 * Routes
 *   POST /v1/audio/speech, /audio/speech
 *   POST /openai/deployments/{deployment}/audio/speech?api-version=...   (Azure OpenAI)
 *
 * Reply: `speechBytes(input)`, 1,000 bytes per character of input, starting with "ID3";
 * content type by response_format (mp3 audio/mpeg, opus audio/opus, aac, flac, wav, pcm).
 * Behaviour switches by model name as for chat (mock-error-<status>, mock-hang, …).
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { AZURE_MISSING_API_VERSION_BODY, BAD_JSON_BODY, errorBody, INVALID_JSON_REPLY } from './mock-openai-chunks';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { answerFailureSwitch, behaviourOf, sendError, sendJson } from './mock-upstream';

const ROUTE = /^(?:\/v1)?\/audio\/speech$|^\/openai\/deployments\/([^/]+)\/audio\/speech$/;
const CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
const CHUNK = 16 * 1024;

/** The audio the mock answers for an input: deterministic, so a test can compare byte for byte. */
export function speechBytes(input: string): Buffer {
  const bytes = Buffer.alloc(input.length * 1000);
  bytes.write('ID3');
  for (let i = 3; i < bytes.length; i++) bytes[i] = (input.charCodeAt(i % input.length) + i) & 0xff;
  return bytes;
}

export function serveOpenAIAudio(res: http.ServerResponse, call: MockCall): boolean {
  const route = ROUTE.exec(call.path);
  if (!route || call.method !== 'POST') return false;
  if (route[1] !== undefined && !new URLSearchParams(call.rawQuery).has('api-version')) {
    sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
    return true;
  }
  const body = call.body;
  if (call.badJson || body === null || typeof body !== 'object') {
    sendJson(res, 400, BAD_JSON_BODY);
    return true;
  }
  for (const field of ['model', 'input', 'voice']) {
    if (typeof body[field] !== 'string' && !(field === 'model' && route[1])) {
      sendJson(res, 400, errorBody(`Missing required parameter: '${field}'.`, 'invalid_request_error', 'missing_required_parameter', field));
      return true;
    }
  }
  const model = String(body.model ?? route[1]);
  const behaviour = behaviourOf(model);
  const replies = { error: (status: number, headers?: Record<string, string>) => sendError(res, status, headers), invalidJson: INVALID_JSON_REPLY };
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: call.flakyFailures, flakyKey: () => model + body.input }, replies)) return true;

  const audio = speechBytes(body.input);
  res.writeHead(200, { 'content-type': CONTENT_TYPES[body.response_format ?? 'mp3'] ?? 'audio/mpeg' }); // no length: chunked over HTTP/1.1, DATA frames over HTTP/2
  let offset = 0;
  // Paced, a chunk per timer tick, as a provider sends audio while it synthesises it (and so
  // a client that leaves early reaches the mock before the whole answer sits in socket buffers).
  const pump = (): void => {
    if (res.destroyed) return;
    if (offset >= audio.length) return void res.end();
    const chunk = audio.subarray(offset, offset + CHUNK);
    offset += chunk.length;
    const next = () => setTimeout(pump, 1);
    if (res.write(chunk)) next();
    else res.once('drain', next);
  };
  pump();
  return true;
}
