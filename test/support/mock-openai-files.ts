/**
 * The mock upstream's Files API and audio transcription/translation, in OpenAI's wire
 * format. The multipart routes are served before the mock reads a body: the form is parsed
 * as a stream (busboy), each file hashed (sha256) and counted as it arrives, so a 300 MB
 * upload never sits in memory. A file's bytes are kept (for its content download) only up
 * to 16 MB. Files are kept in memory per mock server (reset() does not forget them).
 *
 * Routes (also under Azure's `/openai/…?api-version=`: 404 without it)
 *   POST   /v1/files                   multipart: file, purpose, expires_after[anchor|seconds] -> the file object
 *   GET    /v1/files                   list (purpose, limit, after, order; newest first by default)
 *   GET    /v1/files/{id}              the file object, or OpenAI's 404
 *   DELETE /v1/files/{id}              {id, object: 'file', deleted: true}
 *   GET    /v1/files/{id}/content      the bytes, application/octet-stream, in 64 KiB chunks
 *   POST   /v1/audio/transcriptions, /v1/audio/translations (also /openai/v1/…, Groq's base)
 *   POST   /openai/deployments/{deployment}/audio/transcriptions|translations?api-version=…
 * The batch mock's output and error files (purpose "batch_output", mock-openai-batches.ts) are
 * stored here too (storeMockFile) and served by the same routes.
 *
 * Transcripts: text "Transcript of <filename>, <size> bytes" ("Translation of …"). The audio's
 * duration is a WAV's real one (byte rate at offset 28, size of the `data` chunk), else
 * size / 16000 seconds. whisper-1 (and any model not gpt-4o-…): json {text, usage: duration
 * seconds} (translations: {text} only, as OpenAI answers), verbose_json (task, language,
 * duration, text, segments, words with timestamp_granularities[]=word, usage), text, srt, vtt
 * (text/plain; charset=utf-8). gpt-4o(-mini)-transcribe: json/text only, usage in tokens
 * (audio_tokens = ceil(duration * 10), text_tokens = ceil(prompt chars / 4), output_tokens =
 * words of the text).
 * Behaviour switches by the `model` field as for chat (mock-error-<status>, mock-hang, …).
 *
 * Each upload is recorded in `requests` (body = the text fields) with `upload`: the fields,
 * each file's field, name, type, size and sha256 (see `uploadsOf`).
 */
import { Busboy } from '@fastify/busboy';
import { createHash, randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { AZURE_MISSING_API_VERSION_BODY, errorBody, INVALID_JSON_REPLY, MISSING_MODEL_BODY } from './mock-openai-chunks';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { answerFailureSwitch, behaviourOf, sendError, sendJson, type MockUpstream, type RecordedRequest } from './mock-upstream';

/** One file of a recorded upload. `size` and `sha256` are final once the form is read. */
export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** A multipart request as the mock received it (the bytes of its files are not kept here). */
export interface RecordedUpload {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Text fields under the names sent (`timestamp_granularities[]`); a repeated one as an array. */
  fields: Record<string, string | string[]>;
  files: RecordedFile[];
  /** The whole form was read (false while it streams, or when the client went away). */
  complete: boolean;
  /** The client went away before the answer was complete. */
  aborted?: boolean;
}

/** The uploads of this mock server since its last reset(), oldest first. */
export function uploadsOf(mock: MockUpstream): RecordedUpload[] {
  return mock.requests.flatMap((r) => (r.upload ? [r.upload] : []));
}

/** What mock-upstream.ts hands the multipart routes: how to record, the flaky counters. */
export interface MultipartContext {
  /** Records the request (and notes an abort); undefined when the mock does not record. */
  record?: (rec: RecordedRequest, res: http.ServerResponse) => void;
  flakyFailures: Map<string, number>;
}

interface StoredFile {
  object: Record<string, any>;
  /** The bytes, when the file was at most KEEP_BYTES. */
  bytes: Buffer | null;
  sha256: string;
}

const KEEP_BYTES = 16 * 1024 * 1024;
const WAV_HEAD_BYTES = 64 * 1024;
const CHUNK = 64 * 1024;
const PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];
const FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];

const FILES_ROUTE = /^(?:\/v1|\/openai\/v1|\/openai)?\/files(?:\/([^/]+)(\/content)?)?$/;
const AUDIO_ROUTE = /^(?:\/v1|\/openai\/v1|\/openai\/deployments\/([^/]+))?\/audio\/(transcriptions|translations)$/;

const filesByServer = new WeakMap<Map<string, number>, Map<string, StoredFile>>();
function storeOf(flakyFailures: Map<string, number>): Map<string, StoredFile> {
  let files = filesByServer.get(flakyFailures);
  if (!files) filesByServer.set(flakyFailures, (files = new Map()));
  return files;
}

/** A file of this mock server (the flaky counters' map names the server): its object and bytes (null when not kept). */
export function storedFile(flakyFailures: Map<string, number>, id: string): { object: Record<string, any>; bytes: Buffer | null } | undefined {
  return storeOf(flakyFailures).get(id);
}

/** Stores a file the mock itself writes (a batch's output and error files); returns its file object. */
export function storeMockFile(
  flakyFailures: Map<string, number>,
  file: { purpose: string; filename: string; bytes: Buffer; expiresAt?: number | null },
): Record<string, any> {
  const object = {
    object: 'file',
    id: newFileId(),
    purpose: file.purpose,
    filename: file.filename,
    bytes: file.bytes.length,
    created_at: Math.floor(Date.now() / 1000),
    expires_at: file.expiresAt ?? null,
    status: 'processed',
    status_details: null,
  };
  storeOf(flakyFailures).set(object.id, { object, bytes: file.bytes, sha256: createHash('sha256').update(file.bytes).digest('hex') });
  return object;
}

const newFileId = () => 'file-' + randomBytes(11).toString('base64url').replace(/[-_]/g, 'x');

/** Azure's form (`/openai/…` but not its v1 API `/openai/v1/…`) needs `api-version`. */
function missingApiVersion(path: string, rawQuery: string): boolean {
  return path.startsWith('/openai/') && !path.startsWith('/openai/v1/') && !new URLSearchParams(rawQuery).has('api-version');
}

const missing = (param: string) => errorBody(`Missing required parameter: '${param}'.`, 'invalid_request_error', 'missing_required_parameter', param);
const invalid = (message: string, param: string | null = null) => errorBody(message, 'invalid_request_error', null, param);
const noSuchFile = (id: string) => errorBody(`No such File object: ${id}`, 'invalid_request_error', null, 'id');

/** Seconds of audio the mock reports: a WAV's real duration, else size / 16000. */
export function audioSeconds(head: Buffer, size: number): number {
  if (head.length >= 44 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WAVE') {
    const byteRate = head.readUInt32LE(28);
    for (let offset = 12; byteRate > 0 && offset + 8 <= head.length;) {
      const id = head.toString('latin1', offset, offset + 4);
      const chunkSize = head.readUInt32LE(offset + 4);
      if (id === 'data') return Math.min(chunkSize, size - offset - 8) / byteRate;
      offset += 8 + chunkSize + (chunkSize & 1);
    }
  }
  return size / 16000;
}

/** A PCM WAV file of `seconds` of silence-ish samples (for tests). */
export function wavFile(seconds: number, sampleRate = 16000, channels = 1, bitsPerSample = 16): Buffer {
  const byteRate = (sampleRate * channels * bitsPerSample) / 8;
  const dataSize = Math.round(seconds * byteRate);
  const wav = Buffer.alloc(44 + dataSize);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + dataSize, 4);
  wav.write('WAVE', 8, 'latin1');
  wav.write('fmt ', 12, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(channels, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(byteRate, 28);
  wav.writeUInt16LE((channels * bitsPerSample) / 8, 32);
  wav.writeUInt16LE(bitsPerSample, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(dataSize, 40);
  for (let i = 44; i < wav.length; i++) wav[i] = (i * 31) & 0xff;
  return wav;
}

function parseQuery(rawQuery: string): Record<string, string> {
  return rawQuery ? Object.fromEntries(new URLSearchParams(rawQuery)) : {};
}

interface ReadFile extends RecordedFile {
  head: Buffer;
  bytes: Buffer | null;
}

/**
 * The multipart routes (POST /v1/files, audio transcriptions and translations), served
 * before the mock reads the body: returns true when it took the request.
 */
export function serveOpenAIMultipart(req: http.IncomingMessage, res: http.ServerResponse, context: MultipartContext): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const rawQuery = q === -1 ? '' : url.slice(q + 1);
  const files = FILES_ROUTE.exec(path);
  const audio = files ? null : AUDIO_ROUTE.exec(path);
  if (!(files && files[1] === undefined) && !audio) return false;

  const upload: RecordedUpload = { path, headers: req.headers, fields: {}, files: [], complete: false };
  if (context.record) {
    const rec: RecordedRequest = {
      method: 'POST',
      path,
      query: parseQuery(rawQuery),
      headers: req.headers,
      body: upload.fields,
      upload,
      httpVersion: req.httpVersion,
    };
    context.record(rec, res);
    res.once('close', () => {
      if (rec.aborted) upload.aborted = true;
    });
  }
  const answer = (status: number, body: string) => {
    sendJson(res, status, body);
    if (!req.complete) req.resume(); // drain what is left of the form
  };
  if (missingApiVersion(path, rawQuery)) {
    answer(404, AZURE_MISSING_API_VERSION_BODY);
    return true;
  }
  const type = String(req.headers['content-type'] ?? '');
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    answer(
      400,
      invalid(
        `Invalid Content-Type header (${type || 'none'}), expected multipart/form-data. (HINT: If you're using curl, you can pass -H 'Content-Type: multipart/form-data')`,
      ),
    );
    return true;
  }

  let parser;
  try {
    parser = new Busboy({ headers: req.headers as any, limits: { fieldSize: 1024 * 1024 } });
  } catch (error) {
    answer(400, invalid(`Could not parse multipart form: ${(error as Error).message}`));
    return true;
  }
  const read: ReadFile[] = [];
  parser.on('field', (name: string, value: string) => {
    const previous = upload.fields[name];
    upload.fields[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  });
  parser.on('file', (field: string, stream: NodeJS.ReadableStream, filename: string | undefined, _encoding: string, mimeType: string) => {
    const hash = createHash('sha256');
    const recorded: RecordedFile = { field, filename: filename ?? '', contentType: mimeType, size: 0, sha256: '' };
    upload.files.push(recorded);
    const heads: Buffer[] = [];
    let headBytes = 0;
    let kept: Buffer[] | null = [];
    stream.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      recorded.size += chunk.length;
      if (headBytes < WAV_HEAD_BYTES) {
        heads.push(chunk.subarray(0, WAV_HEAD_BYTES - headBytes));
        headBytes += Math.min(chunk.length, WAV_HEAD_BYTES - headBytes);
      }
      if (kept && recorded.size <= KEEP_BYTES) kept.push(chunk);
      else kept = null;
    });
    stream.on('end', () => {
      recorded.sha256 = hash.digest('hex');
      read.push({ ...recorded, head: Buffer.concat(heads), bytes: kept ? Buffer.concat(kept) : null });
    });
  });
  let failed = false;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    if (!res.headersSent && !res.destroyed) answer(400, invalid(`Could not parse multipart form: ${error.message}`));
  };
  parser.on('error', fail);
  parser.on('finish', () => {
    if (failed) return;
    upload.complete = true;
    // 'finish' may come before a file stream's 'end' handler ran: answer on the next tick.
    setImmediate(() => {
      try {
        if (files) createFile(res, upload, read, context.flakyFailures);
        else transcribe(res, upload, read, audio![2] as 'transcriptions' | 'translations', audio![1] && decodeURIComponent(audio![1]), context.flakyFailures);
      } catch (error) {
        if (!res.headersSent) sendJson(res, 500, errorBody(`Mock upstream failure: ${error}`, 'server_error'));
        else res.destroy();
      }
    });
  });
  req.on('aborted', () => parser.destroy());
  req.on('error', () => parser.destroy());
  req.pipe(parser);
  return true;
}

const field = (upload: RecordedUpload, name: string): string | undefined => {
  const value = upload.fields[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
};
const list = (upload: RecordedUpload, name: string): string[] => {
  const value = upload.fields[name] ?? upload.fields[`${name}[]`];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};

function createFile(res: http.ServerResponse, upload: RecordedUpload, read: ReadFile[], flakyFailures: Map<string, number>): void {
  const file = read.find((f) => f.field === 'file');
  if (!file) return sendJson(res, 400, missing('file'));
  const purpose = field(upload, 'purpose');
  if (purpose === undefined) return sendJson(res, 400, missing('purpose'));
  if (!PURPOSES.includes(purpose)) return sendJson(res, 400, invalid(`'${purpose}' is not one of ${JSON.stringify(PURPOSES)} - 'purpose'`, 'purpose'));
  const created = Math.floor(Date.now() / 1000);
  let expiresAt: number | null = purpose === 'batch' ? created + 30 * 86400 : null;
  const anchor = field(upload, 'expires_after[anchor]');
  const seconds = field(upload, 'expires_after[seconds]');
  if (anchor !== undefined || seconds !== undefined) {
    if (anchor !== 'created_at')
      return sendJson(res, 400, invalid(`Invalid value for 'expires_after[anchor]': expected 'created_at'.`, 'expires_after.anchor'));
    const n = Number(seconds);
    if (!Number.isInteger(n) || n < 3600 || n > 2592000)
      return sendJson(res, 400, invalid(`'expires_after[seconds]' must be between 3600 and 2592000.`, 'expires_after.seconds'));
    expiresAt = created + n;
  }
  const id = newFileId();
  const object = {
    object: 'file',
    id,
    purpose,
    filename: file.filename,
    bytes: file.size,
    created_at: created,
    expires_at: expiresAt,
    status: 'processed',
    status_details: null,
  };
  storeOf(flakyFailures).set(id, { object, bytes: file.bytes, sha256: file.sha256 });
  sendJson(res, 200, JSON.stringify(object));
}

/** `00:00:02,500` (srt) or `00:00:02.500` (vtt). */
function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function transcribe(
  res: http.ServerResponse,
  upload: RecordedUpload,
  read: ReadFile[],
  task: 'transcriptions' | 'translations',
  deployment: string | undefined,
  flakyFailures: Map<string, number>,
): void {
  const file = read.find((f) => f.field === 'file');
  if (!file) return sendJson(res, 400, missing('file'));
  const model = field(upload, 'model') ?? deployment;
  if (!model) return sendJson(res, 400, MISSING_MODEL_BODY);
  const format = field(upload, 'response_format') ?? 'json';
  if (!FORMATS.includes(format))
    return sendJson(res, 400, invalid(`'${format}' is not one of ${JSON.stringify(FORMATS)} - 'response_format'`, 'response_format'));
  const tokensModel = /^gpt-4o(-mini)?-transcribe/.test(model);
  if (tokensModel && format !== 'json' && format !== 'text') {
    return sendJson(res, 400, invalid(`response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text'.`, 'response_format'));
  }
  const granularities = list(upload, 'timestamp_granularities');
  if (granularities.length > 0 && format !== 'verbose_json') {
    return sendJson(res, 400, invalid(`timestamp_granularities requires response_format=verbose_json`, 'timestamp_granularities'));
  }
  const temperature = field(upload, 'temperature');
  if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1)) {
    return sendJson(res, 400, invalid(`Invalid 'temperature': expected a number between 0 and 1.`, 'temperature'));
  }

  const behaviour = behaviourOf(model.slice(model.lastIndexOf('/') + 1));
  const replies = { error: (status: number, headers?: Record<string, string>) => sendError(res, status, headers), invalidJson: INVALID_JSON_REPLY };
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: flakyFailures, flakyKey: () => model + '\u0000' + file.filename }, replies)) return;

  const duration = audioSeconds(file.head, file.size);
  const translate = task === 'translations';
  const text = `${translate ? 'Translation' : 'Transcript'} of ${file.filename}, ${file.size} bytes`;
  const send = () => {
    if (format === 'text' || format === 'srt' || format === 'vtt') {
      const body =
        format === 'text'
          ? `${text}\n`
          : format === 'srt'
            ? `1\n${timestamp(0, ',')} --> ${timestamp(duration, ',')}\n${text}\n\n`
            : `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(duration, '.')}\n${text}\n\n`;
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    if (tokensModel) {
      const prompt = field(upload, 'prompt') ?? '';
      const audioTokens = Math.ceil(duration * 10);
      const textTokens = Math.ceil(prompt.length / 4);
      const output = text.split(/\s+/).filter(Boolean).length;
      const usage = {
        type: 'tokens',
        input_tokens: audioTokens + textTokens,
        input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
        output_tokens: output,
        total_tokens: audioTokens + textTokens + output,
      };
      const logprobs = list(upload, 'include').includes('logprobs')
        ? { logprobs: text.split(' ').map((token) => ({ token, logprob: -0.01, bytes: [...Buffer.from(token)] })) }
        : {};
      return sendJson(res, 200, JSON.stringify({ text, ...logprobs, usage }));
    }
    const usage = { type: 'duration', seconds: Math.ceil(duration) };
    if (format === 'json') return sendJson(res, 200, JSON.stringify(translate ? { text } : { text, usage }));
    const words = text.split(' ');
    const verbose: Record<string, unknown> = {
      task: translate ? 'translate' : 'transcribe',
      language: 'english',
      duration,
      text,
      segments: [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: duration,
          text: ` ${text}`,
          tokens: words.map((_, i) => 50364 + i),
          temperature: Number(temperature ?? 0),
          avg_logprob: -0.25,
          compression_ratio: 1.1,
          no_speech_prob: 0.01,
        },
      ],
    };
    if (!translate && granularities.includes('word')) {
      verbose.words = words.map((word, i) => ({ word, start: (duration * i) / words.length, end: (duration * (i + 1)) / words.length }));
    }
    if (!translate && granularities.length > 0 && !granularities.includes('segment')) delete verbose.segments;
    verbose.usage = usage;
    sendJson(res, 200, JSON.stringify(verbose));
  };
  if (behaviour.delayMs === 0) return send();
  const timer = setTimeout(send, behaviour.delayMs);
  res.once('close', () => clearTimeout(timer));
}

/** GET/DELETE on /v1/files…: served in the mock's usual dispatch (the body is read already). */
export function serveOpenAIFiles(res: http.ServerResponse, call: MockCall): boolean {
  const route = FILES_ROUTE.exec(call.path);
  if (!route || (call.method !== 'GET' && call.method !== 'DELETE')) return false;
  if (missingApiVersion(call.path, call.rawQuery)) {
    sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
    return true;
  }
  const store = storeOf(call.flakyFailures);
  const [, rawId, content] = route;
  if (rawId === undefined) {
    if (call.method !== 'GET') return false;
    const query = new URLSearchParams(call.rawQuery);
    const purpose = query.get('purpose');
    const order = query.get('order') ?? 'desc';
    const limit = Math.max(1, Math.min(10000, Number(query.get('limit') ?? 10000) || 10000));
    let all = [...store.values()].map((f) => f.object).filter((f) => !purpose || f.purpose === purpose);
    if (order === 'desc') all = all.reverse();
    const after = query.get('after');
    if (after) {
      const at = all.findIndex((f) => f.id === after);
      all = at === -1 ? [] : all.slice(at + 1);
    }
    const data = all.slice(0, limit);
    sendJson(
      res,
      200,
      JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: all.length > data.length }),
    );
    return true;
  }
  const id = decodeURIComponent(rawId);
  const stored = store.get(id);
  if (!stored) {
    sendJson(res, 404, noSuchFile(id));
    return true;
  }
  if (content) {
    if (call.method !== 'GET') return false;
    if (stored.object.purpose === 'assistants') {
      sendJson(res, 400, invalid('Not allowed to download files of purpose: assistants.'));
      return true;
    }
    if (!stored.bytes) {
      sendJson(res, 400, invalid(`The mock keeps the content of files up to ${KEEP_BYTES} bytes only (${id} has ${stored.object.bytes}).`));
      return true;
    }
    streamBytes(res, stored.bytes);
    return true;
  }
  if (call.method === 'DELETE') {
    store.delete(id);
    sendJson(res, 200, JSON.stringify({ id, object: 'file', deleted: true }));
  } else {
    sendJson(res, 200, JSON.stringify(stored.object));
  }
  return true;
}

/** A file's content in 64 KiB chunks with backpressure (chunked transfer). */
function streamBytes(res: http.ServerResponse, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' }); // no length: chunked over HTTP/1.1, DATA frames over HTTP/2
  let offset = 0;
  const pump = (): void => {
    while (!res.destroyed) {
      if (offset >= bytes.length) return void res.end();
      const chunk = bytes.subarray(offset, offset + CHUNK);
      offset += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}
