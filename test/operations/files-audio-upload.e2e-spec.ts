import { calcPrice } from '@pydantic/genai-prices';
/**
 * Multipart uploads through the gateway with the official `openai` SDK: files
 * (`files.create/list/retrieve/delete/content`) and audio transcription/translation. The
 * form streams to the provider byte for byte (same boundary, same bytes), never held whole
 * (a 300 MB upload through a gateway process barely moves its peak RSS); the log keeps the
 * form's text fields and each file's name, type and size, never its bytes; transcriptions
 * are priced by the second (whisper) or by tokens (gpt-4o-transcribe); limits answer 413.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import OpenAI, { toFile } from 'openai';
import { call, createConfig, createVirtualKey, expectError, logOf, openai, type RawResponse, waitFor } from '../support/e2e-helpers';
import { GatewayProcess, startGatewayProcess } from '../support/gateway-process';
import { uploadsOf, wavFile } from '../support/mock-openai-files';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

const MiB = 1024 * 1024;
const LIMIT = 24 * MiB;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const pattern = (size: number, seed = 7) => {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * seed + (i >> 9)) & 0xff;
  return bytes;
};
/** whisper-1: $0.006 a minute. */
const whisperCost = (seconds: number) => (seconds / 60) * 0.006;
/** A token-priced transcription's cost by the price catalog itself (`@pydantic/genai-prices`). */
const catalogCost = (model: string, usage: { input_tokens: number; output_tokens: number; input_token_details: { audio_tokens: number } }) =>
  calcPrice({ input_tokens: usage.input_tokens, input_audio_tokens: usage.input_token_details.audio_tokens, output_tokens: usage.output_tokens }, model, {
    providerId: 'openai',
  })!.total_price;

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body, for requests the SDK would not send. */
function multipart(parts: Part[], boundary = `----gatewaytest${randomBytes(8).toString('hex')}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename !== undefined ? `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

/** One raw HTTP request (node:http), for bodies and headers fetch would not send as they are. */
function rawRequest(
  url: string,
  path: string,
  headers: Record<string, string>,
  write: (req: http.ClientRequest) => void,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; body: any }> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body });
        req.destroy(); // a request cut short by the answer (413) is not finished
      });
      res.on('error', reject);
    });
    // Once the gateway has answered (a 413 mid-stream) it may close the connection under the writer.
    req.on('error', (error) => setTimeout(() => reject(error), 200));
    write(req);
  });
}

/** A raw answer in the shape `expectError` takes. */
const asRaw = (response: { status: number; text: string; body: any }): RawResponse => ({
  status: response.status,
  headers: new Headers(),
  text: response.text,
  body: response.body,
});

/** Writes `total` bytes of a file part in 1 MiB chunks with backpressure, hashing them; stops when the request is gone. */
function streamForm(req: http.ClientRequest, head: Buffer, total: number, tail: Buffer | null, hash?: ReturnType<typeof createHash>): void {
  const base = randomBytes(MiB);
  let sent = 0;
  let index = 0;
  req.write(head);
  const pump = (): void => {
    while (sent < total) {
      if (req.destroyed) return;
      const chunk = Buffer.from(base.subarray(0, Math.min(MiB, total - sent)));
      chunk.writeUInt32LE(index++, 0);
      sent += chunk.length;
      hash?.update(chunk);
      if (!req.write(chunk)) return void req.once('drain', pump);
    }
    if (tail) req.end(tail);
  };
  pump();
}

describe('files and audio uploads', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  const encryptionKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ UPLOAD_LIMIT_BYTES: String(LIMIT), GATEWAY_ENCRYPTION_KEY: encryptionKey });
    await createVirtualKey(gateway, { slug: 'openai-files', key: 'sk-files', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, {
      slug: 'azure-files',
      provider: 'azure-openai',
      key: 'azure-secret',
      custom_host: mock.url,
      provider_options: { api_version: '2024-10-21' },
    });
    await createVirtualKey(gateway, {
      slug: 'azure-whisper',
      provider: 'azure-openai',
      key: 'azure-secret',
      custom_host: mock.url,
      provider_options: { api_version: '2024-10-21', deployment: 'whisper-prod' },
    });
    await createVirtualKey(gateway, { slug: 'groq-audio', provider: 'groq', key: 'gsk-audio-000000', custom_host: `${mock.url}/openai/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const client = (slug = 'openai-files') => openai(gateway, { 'x-gateway-virtual-key': slug });
  const requestId = (response: Response) => response.headers.get('x-gateway-request-id');
  /** Sends a multipart body as it is (raw node:http, Content-Length set). */
  const postForm = (path: string, form: { body: Buffer; contentType: string }, slug = 'openai-files') =>
    rawRequest(
      gateway.url,
      path,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': slug, 'content-type': form.contentType, 'content-length': String(form.body.length) },
      (req) => req.end(form.body),
    );

  describe('files', () => {
    it('streams a 5 MB upload byte for byte, downloads it back equal, and logs its name and size only', async () => {
      const bytes = pattern(5 * MiB + 123);
      const { data: file, response } = await client()
        .files.create({ file: await toFile(bytes, 'train.jsonl', { type: 'application/jsonl' }), purpose: 'fine-tune' })
        .withResponse();
      expect(file).toMatchObject({
        object: 'file',
        id: expect.stringMatching(/^file-/),
        bytes: bytes.length,
        filename: 'train.jsonl',
        purpose: 'fine-tune',
        status: 'processed',
      });

      const [upload] = uploadsOf(mock);
      expect(uploadsOf(mock)).toHaveLength(1);
      expect(upload).toMatchObject({ path: '/v1/files', complete: true, fields: { purpose: 'fine-tune' } });
      expect(upload.files).toEqual([{ field: 'file', filename: 'train.jsonl', contentType: 'application/jsonl', size: bytes.length, sha256: sha256(bytes) }]);
      expect(upload.headers.authorization).toBe('Bearer sk-files');
      expect(upload.headers['x-gateway-api-key']).toBeUndefined();

      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({
        operation: 'files.create',
        provider: 'openai',
        status_code: 200,
        request_body: { purpose: 'fine-tune', files: [{ field: 'file', filename: 'train.jsonl', content_type: 'application/jsonl', bytes: bytes.length }] },
        response_body: file,
      });
      expect(Object.keys(log.request_body).sort()).toEqual(['files', 'purpose']);
      expect(JSON.stringify(log).length).toBeLessThan(bytes.length / 100);

      const { data: content, response: contentResponse } = await client().files.content(file.id).withResponse();
      expect(content.headers.get('content-type')).toBe('application/octet-stream');
      const downloaded = Buffer.from(await content.arrayBuffer());
      expect(downloaded.length).toBe(bytes.length);
      expect(sha256(downloaded)).toBe(sha256(bytes));
      const contentLog = await logOf(gateway, requestId(contentResponse));
      expect(contentLog).toMatchObject({
        operation: 'files.content',
        status_code: 200,
        response_body: { type: 'file', content_type: 'application/octet-stream', bytes: bytes.length },
      });
      expect(JSON.stringify(contentLog).length).toBeLessThan(bytes.length / 100);
    });

    it('passes the client’s own bytes on: same boundary, same length, same fields (expires_after) and file', async () => {
      const bytes = pattern(300_000, 11);
      const form = multipart([
        { name: 'purpose', value: 'user_data' },
        { name: 'expires_after[anchor]', value: 'created_at' },
        { name: 'expires_after[seconds]', value: '7200' },
        { name: 'file', value: bytes, filename: 'batch input.jsonl', type: 'application/jsonl' },
      ]);
      const response = await postForm('/v1/files', form);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ object: 'file', bytes: bytes.length, filename: 'batch input.jsonl', purpose: 'user_data' });
      expect(response.body.expires_at).toBe(response.body.created_at + 7200);

      const [upload] = uploadsOf(mock);
      expect(upload.headers['content-type']).toBe(form.contentType);
      expect(upload.headers['content-length']).toBe(String(form.body.length));
      expect(upload.fields).toEqual({ purpose: 'user_data', 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '7200' });
      expect(upload.files).toEqual([
        { field: 'file', filename: 'batch input.jsonl', contentType: 'application/jsonl', size: bytes.length, sha256: sha256(bytes) },
      ]);

      const log = await logOf(gateway, response.headers['x-gateway-request-id'] as string);
      expect(log.request_body).toEqual({
        purpose: 'user_data',
        'expires_after[anchor]': 'created_at',
        'expires_after[seconds]': '7200',
        files: [{ field: 'file', filename: 'batch input.jsonl', content_type: 'application/jsonl', bytes: bytes.length }],
      });
    });

    it('lists, retrieves and deletes, each its own operation; a missing file is the provider’s 404', async () => {
      const first = await client().files.create({ file: await toFile(Buffer.from('{"a":1}\n'), 'one.jsonl'), purpose: 'fine-tune' });
      const second = await client().files.create({ file: await toFile(Buffer.from('{"b":2}\n'), 'two.jsonl'), purpose: 'user_data' });

      const { data: page, response: listResponse } = await client().files.list({ purpose: 'fine-tune' }).withResponse();
      expect(page.data.map((f) => f.id)).toContain(first.id);
      expect(page.data.every((f) => f.purpose === 'fine-tune')).toBe(true);
      expect(mock.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/files', query: { purpose: 'fine-tune' } });
      const newest = await client().files.list({ limit: 1 });
      expect(newest.data.map((f) => f.id)).toEqual([second.id]);
      expect(newest.hasNextPage()).toBe(true);
      expect((await newest.getNextPage()).data[0].id).toBe(first.id);
      expect(mock.requests.at(-1)!.query).toEqual({ limit: '1', after: second.id });

      const { data: retrieved, response: retrieveResponse } = await client().files.retrieve(first.id).withResponse();
      expect(retrieved).toEqual(first);
      const { data: deleted, response: deleteResponse } = await client().files.delete(second.id).withResponse();
      expect(deleted).toEqual({ id: second.id, object: 'file', deleted: true });
      expect(mock.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/files/${second.id}` });

      const gone = await client()
        .files.retrieve(second.id)
        .catch((error) => error);
      expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
      expect(gone.error).toMatchObject({ message: `No such File object: ${second.id}`, param: 'id' });

      expect(await logOf(gateway, requestId(listResponse))).toMatchObject({ operation: 'files.list', status_code: 200 });
      expect(await logOf(gateway, requestId(retrieveResponse))).toMatchObject({ operation: 'files.retrieve', status_code: 200, response_body: first });
      expect(await logOf(gateway, requestId(deleteResponse))).toMatchObject({ operation: 'files.delete', status_code: 200, response_body: deleted });
    });

    it('reaches Azure OpenAI at /openai/files with its api-version', async () => {
      const azure = client('azure-files');
      const file = await azure.files.create({ file: await toFile(Buffer.from('{"x":1}\n'), 'azure.jsonl'), purpose: 'fine-tune' });
      expect(file.bytes).toBe(8);
      expect((await azure.files.list()).data.map((f) => f.id)).toContain(file.id);
      expect(Buffer.from(await (await azure.files.content(file.id)).arrayBuffer()).toString()).toBe('{"x":1}\n');
      expect(await azure.files.delete(file.id)).toMatchObject({ deleted: true });
      expect(mock.requests.map((r) => [r.method, r.path, r.query['api-version'], r.headers['api-key']])).toEqual([
        ['POST', '/openai/files', '2024-10-21', 'azure-secret'],
        ['GET', '/openai/files', '2024-10-21', 'azure-secret'],
        ['GET', `/openai/files/${file.id}/content`, '2024-10-21', 'azure-secret'],
        ['DELETE', `/openai/files/${file.id}`, '2024-10-21', 'azure-secret'],
      ]);
    });
  });

  describe('audio transcriptions and translations', () => {
    const audio = pattern(48_000); // not a WAV: the mock hears 48,000 / 16,000 = 3 s
    const mp3 = () => toFile(audio, 'speech.mp3', { type: 'audio/mpeg' });
    const transcript = `Transcript of speech.mp3, ${audio.length} bytes`;

    it('verbose_json: passes through, logs the fields (an array field `name[]` as an array under `name`) and the file, priced from duration', async () => {
      const { data, response } = await client()
        .audio.transcriptions.create({
          model: 'whisper-1',
          file: await mp3(),
          response_format: 'verbose_json',
          timestamp_granularities: ['word', 'segment'],
          language: 'en',
        })
        .withResponse();
      expect(data).toMatchObject({ task: 'transcribe', language: 'english', duration: 3, text: transcript, usage: { type: 'duration', seconds: 3 } });
      expect(data.words).toHaveLength(transcript.split(' ').length);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);

      const [upload] = uploadsOf(mock);
      expect(upload).toMatchObject({ path: '/v1/audio/transcriptions', complete: true });
      expect(upload.files[0]).toMatchObject({ filename: 'speech.mp3', size: audio.length, sha256: sha256(audio) });

      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({ operation: 'audio.transcriptions', model: 'whisper-1', status_code: 200, response_body: data });
      expect(log.request_body).toEqual({
        model: 'whisper-1',
        response_format: 'verbose_json',
        timestamp_granularities: ['word', 'segment'], // sent as `timestamp_granularities[]`
        language: 'en',
        files: [{ field: 'file', filename: 'speech.mp3', content_type: 'audio/mpeg', bytes: audio.length }],
      });
      expect(log.cost_usd).toBeCloseTo(whisperCost(3), 12);
    });

    it('json: priced from usage.seconds', async () => {
      const long = pattern(16000 * 95); // 95 s
      const { data, response } = await client()
        .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(long, 'meeting.ogg') })
        .withResponse();
      expect(data).toEqual({ text: `Transcript of meeting.ogg, ${long.length} bytes`, usage: { type: 'duration', seconds: 95 } });
      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({ operation: 'audio.transcriptions', model: 'whisper-1', response_body: data });
      expect(log.cost_usd).toBeCloseTo(whisperCost(95), 12);
    });

    it('text, srt and vtt pass through as text with the provider’s content type; a WAV’s own duration prices them', async () => {
      const { data: text, response } = await client()
        .audio.transcriptions.create({ model: 'whisper-1', file: await mp3(), response_format: 'text' })
        .withResponse();
      expect(text).toBe(`${transcript}\n`);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({
        operation: 'audio.transcriptions',
        model: 'whisper-1',
        response_body: { type: 'text', content_type: 'text/plain; charset=utf-8', text: `${transcript}\n` },
      });
      expect(log.cost_usd).toBeNull(); // neither the answer nor the (non-WAV) file says how long it is

      const srt = await client().audio.transcriptions.create({ model: 'whisper-1', file: await mp3(), response_format: 'srt' });
      expect(srt).toBe(`1\n00:00:00,000 --> 00:00:03,000\n${transcript}\n\n`);
      const vtt = await client().audio.transcriptions.create({ model: 'whisper-1', file: await mp3(), response_format: 'vtt' });
      expect(vtt).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n${transcript}\n\n`);

      const wav = wavFile(4, 22050); // 4 s
      const { data: wavText, response: wavResponse } = await client()
        .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(wav, 'clip.wav', { type: 'audio/wav' }), response_format: 'text' })
        .withResponse();
      expect(wavText).toBe(`Transcript of clip.wav, ${wav.length} bytes\n`);
      const wavLog = await logOf(gateway, requestId(wavResponse));
      expect(wavLog.response_body).toMatchObject({ type: 'text', text: wavText });
      expect(wavLog.cost_usd).toBeCloseTo(whisperCost(4), 12);
    });

    it('gpt-4o-transcribe and gpt-4o-mini-transcribe: priced by tokens, logged as prompt/completion tokens', async () => {
      const { data, response } = await client()
        .audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await mp3(), prompt: 'Cats and dogs.', include: ['logprobs'] })
        .withResponse();
      expect(data.logprobs).toHaveLength(transcript.split(' ').length);
      const usage = (data as any).usage;
      expect(usage).toMatchObject({ type: 'tokens', input_tokens: 30 + 4, input_token_details: { audio_tokens: 30, text_tokens: 4 } });
      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({
        operation: 'audio.transcriptions',
        model: 'gpt-4o-transcribe',
        prompt_tokens: usage.input_tokens,
        completion_tokens: usage.output_tokens,
      });
      expect(log.request_body).toMatchObject({ model: 'gpt-4o-transcribe', prompt: 'Cats and dogs.', include: ['logprobs'] }); // one `include[]` value: still an array
      // The audio part of the input at the catalog's audio rate, the text part at its text rate.
      expect(log.cost_usd).toBeCloseTo(catalogCost('gpt-4o-transcribe', usage), 12);

      const { data: mini, response: miniResponse } = await client()
        .audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await mp3() })
        .withResponse();
      const miniUsage = (mini as any).usage;
      const miniLog = await logOf(gateway, requestId(miniResponse));
      expect(miniLog).toMatchObject({ model: 'gpt-4o-mini-transcribe', prompt_tokens: miniUsage.input_tokens, completion_tokens: miniUsage.output_tokens });
      expect(miniLog.cost_usd).toBeCloseTo(catalogCost('gpt-4o-mini-transcribe', miniUsage), 12);
    });

    it('translations: verbose_json priced from duration, json of a WAV from the file', async () => {
      const { data, response } = await client()
        .audio.translations.create({ model: 'whisper-1', file: await toFile(audio, 'french.m4a'), response_format: 'verbose_json' })
        .withResponse();
      expect(data).toMatchObject({ task: 'translate', duration: 3, text: `Translation of french.m4a, ${audio.length} bytes` });
      expect(mock.requests[0].path).toBe('/v1/audio/translations');
      const log = await logOf(gateway, requestId(response));
      expect(log).toMatchObject({ operation: 'audio.translations', model: 'whisper-1', request_body: { model: 'whisper-1', response_format: 'verbose_json' } });
      expect(log.cost_usd).toBeCloseTo(whisperCost(3), 12);

      const wav = wavFile(6, 8000);
      const { data: json, response: jsonResponse } = await client()
        .audio.translations.create({ model: 'whisper-1', file: await toFile(wav, 'german.wav') })
        .withResponse();
      expect(json).toEqual({ text: `Translation of german.wav, ${wav.length} bytes` }); // no usage: OpenAI does not say
      const jsonLog = await logOf(gateway, requestId(jsonResponse));
      expect(jsonLog).toMatchObject({ operation: 'audio.translations', response_body: json });
      expect(jsonLog.cost_usd).toBeCloseTo(whisperCost(6), 12);
    });

    it("passes a provider's error through, and does not retry or fall back with an upload", async () => {
      const limited = await client()
        .audio.transcriptions.create({ model: 'mock-error-429', file: await mp3() })
        .catch((error) => error);
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
      expect(limited.error).toMatchObject({ code: 'rate_limit_exceeded' });

      mock.reset();
      const target = { provider: 'openai', api_key: 'sk-files', custom_host: `${mock.url}/v1`, retry: { attempts: 3 } };
      await createConfig(gateway, 'upload-fallback', { strategy: { mode: 'fallback' }, targets: [target, { ...target, retry: undefined }] });
      const form = multipart([
        { name: 'model', value: 'mock-error-503' },
        { name: 'file', value: audio, filename: 'speech.mp3', type: 'audio/mpeg' },
      ]);
      const response = await rawRequest(
        gateway.url,
        '/v1/audio/transcriptions',
        { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': 'upload-fallback', 'content-type': form.contentType },
        (req) => req.end(form.body),
      );
      expect(response.status).toBe(503);
      expect(mock.requests).toHaveLength(1);
    });

    it('reaches Azure at the deployment (provider_options.deployment, else the model field) and Groq at its OpenAI-compatible base', async () => {
      const byModel = await client('azure-files').audio.transcriptions.create({ model: 'my-whisper', file: await mp3(), response_format: 'json' });
      expect(byModel).toMatchObject({ text: transcript });
      const byOption = await client('azure-whisper').audio.translations.create({ model: 'whisper-1', file: await mp3(), response_format: 'text' });
      expect(byOption).toBe(`Translation of speech.mp3, ${audio.length} bytes\n`);
      expect(mock.requests.map((r) => [r.path, r.query['api-version'], r.headers['api-key']])).toEqual([
        ['/openai/deployments/my-whisper/audio/transcriptions', '2024-10-21', 'azure-secret'],
        ['/openai/deployments/whisper-prod/audio/translations', '2024-10-21', 'azure-secret'],
      ]);
      expect(uploadsOf(mock).map((u) => u.files[0].sha256)).toEqual([sha256(audio), sha256(audio)]);

      mock.reset();
      // Azure without a deployment or a model: nowhere to send it.
      const nowhere = await client('azure-files')
        .audio.transcriptions.create({ file: await mp3() } as any)
        .catch((error) => error);
      expect(nowhere).toMatchObject({ status: 400, error: { type: 'invalid_request_error', param: 'model' } });
      expect(mock.requests).toHaveLength(0);

      const { data: groq, response } = await client('groq-audio')
        .audio.transcriptions.create({ model: 'whisper-large-v3', file: await mp3() })
        .withResponse();
      expect(groq).toMatchObject({ text: transcript });
      expect(mock.requests[0]).toMatchObject({ path: '/openai/v1/audio/transcriptions', headers: { authorization: 'Bearer gsk-audio-000000' } });
      expect(await logOf(gateway, requestId(response))).toMatchObject({ provider: 'groq', operation: 'audio.transcriptions', model: 'whisper-large-v3' });
    });
  });

  describe('limits and malformed bodies', () => {
    const headers = (extra: Record<string, string>) => ({ 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'openai-files', ...extra });

    it('413 from a Content-Length over UPLOAD_LIMIT_BYTES, before the body is read', async () => {
      const form = multipart([{ name: 'purpose', value: 'fine-tune' }]);
      // Only the head of the body is sent: the answer must not wait for the rest.
      const response = await rawRequest(gateway.url, '/v1/files', headers({ 'content-type': form.contentType, 'content-length': String(LIMIT + 1) }), (req) =>
        req.write(form.body.subarray(0, 40)),
      );
      expectError(asRaw(response), 413, { type: 'invalid_request_error', code: 'payload_too_large' });
      const transcription = await rawRequest(
        gateway.url,
        '/v1/audio/transcriptions',
        headers({ 'content-type': form.contentType, 'content-length': String(LIMIT * 4) }),
        (req) => req.write(form.body.subarray(0, 40)),
      );
      expect([transcription.status, transcription.body?.error?.code]).toEqual([413, 'payload_too_large']);
      expect(mock.requests).toHaveLength(0);
    });

    it('413 when a chunked upload passes the limit, and the provider request is aborted', async () => {
      const boundary = 'chunkedboundary413';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const response = await rawRequest(
        gateway.url,
        '/v1/files',
        headers({ 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' }),
        (req) => {
          streamForm(req, head, LIMIT * 3, Buffer.from(`\r\n--${boundary}--\r\n`));
        },
      );
      expect([response.status, response.body?.error?.code]).toEqual([413, 'payload_too_large']);
      // The provider either never saw the upload or saw it cut short.
      await waitFor(() => uploadsOf(mock).every((u) => u.aborted && !u.complete) || null);
      expect(uploadsOf(mock).every((u) => u.files.every((f) => f.size <= LIMIT))).toBe(true);
    });

    it('400 for a body that is not multipart or a form without its file; none reaches the provider', async () => {
      const json = await call(gateway, '/v1/files', { headers: { 'x-gateway-virtual-key': 'openai-files' }, body: { purpose: 'fine-tune' } });
      expectError(json, 400, { type: 'invalid_request_error', message: /multipart\/form-data/ });
      const audioJson = await call(gateway, '/v1/audio/transcriptions', { headers: { 'x-gateway-virtual-key': 'openai-files' }, body: { model: 'whisper-1' } });
      expectError(audioJson, 400, { type: 'invalid_request_error', message: /multipart\/form-data/ });

      const noFile = await postForm('/v1/files', multipart([{ name: 'purpose', value: 'fine-tune' }]));
      expectError(asRaw(noFile), 400, { type: 'invalid_request_error', param: 'file' });
      const noFileAudio = await postForm('/v1/audio/translations', multipart([{ name: 'model', value: 'whisper-1' }]));
      expectError(asRaw(noFileAudio), 400, { type: 'invalid_request_error', param: 'file' });

      const broken = await rawRequest(gateway.url, '/v1/files', headers({ 'content-type': 'multipart/form-data' }), (req) => req.end('no boundary'));
      expect(broken.status).toBe(400);
      expect(mock.requests).toHaveLength(0);
    });

    it('400 param model for a transcription without model, not sent to the provider', async () => {
      const noModel = await client()
        .audio.transcriptions.create({ file: await toFile(Buffer.from('abc'), 'a.mp3'), response_format: 'json' } as any)
        .catch((error) => error);
      expect(noModel).toBeInstanceOf(OpenAI.BadRequestError);
      expect(noModel.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
      expect(mock.requests).toHaveLength(0);
    });
  });

  describe('memory: a 300 MB upload through a gateway process', () => {
    let child: GatewayProcess;

    beforeAll(async () => {
      child = await startGatewayProcess({ DATABASE_URL: gateway.databaseUrl, GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY, GATEWAY_ENCRYPTION_KEY: encryptionKey });
    }, 180_000);

    afterAll(async () => {
      await child?.stop(2_000);
    });

    const peakRss = () => {
      const status = readFileSync(`/proc/${child.child.pid}/status`, 'utf8');
      return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
    };

    it('streams it: the peak RSS grows by less than 80 MB, and the provider gets every byte', async () => {
      const size = 300 * MiB;
      const boundary = 'memorycheck' + randomBytes(6).toString('hex');
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const send = (bytes: number, hash?: ReturnType<typeof createHash>) =>
        rawRequest(
          child.url,
          '/v1/files',
          {
            'x-gateway-api-key': TEST_ADMIN_KEY,
            'x-gateway-virtual-key': 'openai-files',
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(head.length + bytes + tail.length),
          },
          (req) => streamForm(req, head, bytes, tail, hash),
        );

      // Warm up: the code paths of an upload loaded, the virtual key cached.
      const warm = await send(2 * MiB);
      expect(warm.status).toBe(200);
      const before = peakRss();

      mock.reset();
      const hash = createHash('sha256');
      const response = await send(size, hash);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ object: 'file', bytes: size, filename: 'big.bin' });
      // The gateway's peak resident memory (VmHWM) grew by (bytes):
      expect(peakRss() - before).toBeLessThan(80 * 1000 * 1000);
      expect(uploadsOf(mock)[0].files[0]).toEqual({
        field: 'file',
        filename: 'big.bin',
        contentType: 'application/octet-stream',
        size,
        sha256: hash.digest('hex'),
      });

      // Its log row, written by the process to the shared database, has the size and no bytes.
      const id = response.headers['x-gateway-request-id'] as string;
      const log = await waitFor(async () => {
        const row = await admin(gateway, 'GET', `/v1/logs/${id}`);
        return row.status === 200 ? row.body : null;
      }, 10_000);
      expect(log).toMatchObject({
        operation: 'files.create',
        request_body: { purpose: 'user_data', files: [{ field: 'file', filename: 'big.bin', bytes: size }] },
      });
      expect(JSON.stringify(log).length).toBeLessThan(100_000);
    }, 60_000);
  });
});
