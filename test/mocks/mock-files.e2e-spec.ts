/**
 * Self-test of the mock upstream's Files API and audio transcription/translation: the
 * official `openai` SDK, pointed straight at the mock, must accept everything it answers,
 * and the mock must record each upload (fields, file size and sha256) as it was sent.
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import OpenAI, { toFile } from 'openai';
import { uploadsOf, wavFile } from '../support/mock-openai-files';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const pattern = (size: number, seed = 7) => {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * seed + (i >> 8)) & 0xff;
  return bytes;
};

describe('mock upstream: files and audio transcription (OpenAI wire format)', () => {
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    client = new OpenAI({ baseURL: mock.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
  });
  afterAll(() => mock.close());
  beforeEach(() => mock.reset());

  it('uploads, lists, retrieves, downloads byte for byte and deletes a file', async () => {
    const bytes = pattern(3 * 1024 * 1024 + 17);
    const file = await client.files.create({ file: await toFile(bytes, 'train.jsonl', { type: 'application/jsonl' }), purpose: 'fine-tune' });
    expect(file).toEqual({
      object: 'file',
      id: expect.stringMatching(/^file-[A-Za-z0-9]+$/),
      purpose: 'fine-tune',
      filename: 'train.jsonl',
      bytes: bytes.length,
      created_at: expect.any(Number),
      expires_at: null,
      status: 'processed',
      status_details: null,
    });
    const [upload] = uploadsOf(mock);
    expect(upload).toMatchObject({
      path: '/v1/files',
      complete: true,
      fields: { purpose: 'fine-tune' },
      files: [{ field: 'file', filename: 'train.jsonl', contentType: 'application/jsonl', size: bytes.length, sha256: sha256(bytes) }],
    });
    expect(upload.aborted).toBeUndefined();
    expect(mock.requests[0]).toMatchObject({ method: 'POST', path: '/v1/files', body: { purpose: 'fine-tune' }, headers: { authorization: 'Bearer sk-test' } });

    const batch = await client.files.create({
      file: await toFile(Buffer.from('{}\n'), 'batch.jsonl'),
      purpose: 'batch',
      expires_after: { anchor: 'created_at', seconds: 7200 },
    });
    expect(batch.expires_at).toBe(batch.created_at + 7200);
    expect(uploadsOf(mock)[1].fields).toEqual({ purpose: 'batch', 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '7200' });

    const listed = await client.files.list();
    expect(listed.data.map((f) => f.id).slice(0, 2)).toEqual([batch.id, file.id]);
    const fineTune = await client.files.list({ purpose: 'fine-tune' });
    expect(fineTune.data.every((f) => f.purpose === 'fine-tune')).toBe(true);
    const page = await client.files.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.hasNextPage()).toBe(true);
    const next = await page.getNextPage();
    expect(next.data[0].id).toBe(file.id);

    expect(await client.files.retrieve(file.id)).toEqual(file);
    const content = await client.files.content(file.id);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await content.arrayBuffer()).equals(bytes)).toBe(true);

    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    const gone = await client.files.retrieve(file.id).catch((error) => error);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.error).toMatchObject({ message: `No such File object: ${file.id}`, type: 'invalid_request_error', param: 'id' });
  });

  it('answers missing or wrong fields with OpenAI 400s', async () => {
    const post = async (form: FormData) => {
      const response = await fetch(`${mock.url}/v1/files`, { method: 'POST', body: form });
      return { status: response.status, body: await response.json() };
    };
    const onlyFile = new FormData();
    onlyFile.append('file', new Blob(['x']), 'x.jsonl');
    expect(await post(onlyFile)).toEqual({
      status: 400,
      body: {
        error: { message: "Missing required parameter: 'purpose'.", type: 'invalid_request_error', param: 'purpose', code: 'missing_required_parameter' },
      },
    });
    const onlyPurpose = new FormData();
    onlyPurpose.append('purpose', 'fine-tune');
    expect(await post(onlyPurpose)).toMatchObject({ status: 400, body: { error: { param: 'file', code: 'missing_required_parameter' } } });
    const json = await fetch(`${mock.url}/v1/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(400);
    expect(((await json.json()) as any).error.message).toContain('multipart/form-data');

    const noModel = await client.audio.transcriptions.create({ file: await toFile(Buffer.from('abc'), 'a.mp3') } as any).catch((e) => e);
    expect(noModel).toMatchObject({ status: 400, error: { message: 'you must provide a model parameter' } });
    const badFormat = await client.audio.transcriptions
      .create({ model: 'gpt-4o-transcribe', file: await toFile(Buffer.from('abc'), 'a.mp3'), response_format: 'srt' })
      .catch((e) => e);
    expect(badFormat).toMatchObject({ status: 400, error: { param: 'response_format' } });
    const missingFile = await client.files.retrieve('file-nope').catch((e) => e);
    expect(missingFile).toMatchObject({ status: 404 });
  });

  it('transcribes in every response format with whisper-1, usage in seconds', async () => {
    const audio = pattern(48_000); // not a WAV: 48000 / 16000 = 3 s
    const file = () => toFile(audio, 'speech.mp3', { type: 'audio/mpeg' });
    const text = `Transcript of speech.mp3, ${audio.length} bytes`;

    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() });
    expect(json).toEqual({ text, usage: { type: 'duration', seconds: 3 } });

    const verbose = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
      language: 'en',
      temperature: 0.2,
    });
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', duration: 3, text, usage: { type: 'duration', seconds: 3 } });
    expect(verbose.segments![0]).toMatchObject({ id: 0, start: 0, end: 3, temperature: 0.2 });
    expect(verbose.words!.map((w) => w.word).join(' ')).toBe(text);
    expect(uploadsOf(mock)[1].fields).toEqual({
      model: 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': ['word', 'segment'],
      language: 'en',
      temperature: '0.2',
    });

    const plain = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'text' });
    expect(plain).toBe(`${text}\n`);
    const srt = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'srt' });
    expect(srt).toBe(`1\n00:00:00,000 --> 00:00:03,000\n${text}\n\n`);
    const vtt = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'vtt' });
    expect(vtt).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n${text}\n\n`);

    const raw = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'srt' }).asResponse();
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(uploadsOf(mock).every((u) => u.files[0].sha256 === sha256(audio))).toBe(true);
  });

  it('reads a WAV file’s real duration; gpt-4o-transcribe answers usage in tokens', async () => {
    const wav = wavFile(2.5, 24000); // 2.5 s at 48,000 bytes a second
    const verbose = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(wav, 'clip.wav', { type: 'audio/wav' }),
      response_format: 'verbose_json',
    });
    expect(verbose.duration).toBeCloseTo(2.5, 6);
    expect(verbose.usage).toEqual({ type: 'duration', seconds: 3 });

    const tokens = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await toFile(wav, 'clip.wav'), prompt: 'A clip about cats' });
    const words = `Transcript of clip.wav, ${wav.length} bytes`.split(' ').length;
    expect(tokens).toEqual({
      text: `Transcript of clip.wav, ${wav.length} bytes`,
      usage: {
        type: 'tokens',
        input_tokens: 25 + 5,
        input_token_details: { text_tokens: 5, audio_tokens: 25 },
        output_tokens: words,
        total_tokens: 30 + words,
      },
    });
    const mini = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await toFile(wav, 'clip.wav'), response_format: 'text' });
    expect(mini).toBe(`Transcript of clip.wav, ${wav.length} bytes\n`);
  });

  it('translates; failure switches by model', async () => {
    const audio = pattern(32_000);
    const json = await client.audio.translations.create({ model: 'whisper-1', file: await toFile(audio, 'french.m4a') });
    expect(json).toEqual({ text: 'Translation of french.m4a, 32000 bytes' });
    const verbose = await client.audio.translations.create({ model: 'whisper-1', file: await toFile(audio, 'french.m4a'), response_format: 'verbose_json' });
    expect(verbose).toMatchObject({
      task: 'translate',
      language: 'english',
      duration: 2,
      text: 'Translation of french.m4a, 32000 bytes',
      usage: { type: 'duration', seconds: 2 },
    });
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/audio/translations', '/v1/audio/translations']);

    const limited = await client.audio.transcriptions.create({ model: 'mock-error-429', file: await toFile(audio, 'a.mp3') }).catch((e) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers.get('retry-after')).toBe('1');
  });

  it('serves Azure’s paths with api-version, and 404s without it', async () => {
    const azure = new OpenAI({
      baseURL: `${mock.url}/openai`,
      apiKey: 'unused',
      defaultHeaders: { 'api-key': 'azure-secret' },
      defaultQuery: { 'api-version': '2024-10-21' },
      maxRetries: 0,
    });
    const uploaded = await azure.files.create({ file: await toFile(Buffer.from('{"a":1}\n'), 'a.jsonl'), purpose: 'batch' });
    expect(uploaded.bytes).toBe(8);
    expect((await azure.files.list()).data.map((f) => f.id)).toContain(uploaded.id);
    expect(Buffer.from(await (await azure.files.content(uploaded.id)).arrayBuffer()).toString()).toBe('{"a":1}\n');
    expect(mock.requests.map((r) => [r.method, r.path, r.query['api-version']])).toEqual([
      ['POST', '/openai/files', '2024-10-21'],
      ['GET', '/openai/files', '2024-10-21'],
      ['GET', `/openai/files/${uploaded.id}/content`, '2024-10-21'],
    ]);

    const deployment = new OpenAI({
      baseURL: `${mock.url}/openai/deployments/my-whisper`,
      apiKey: 'unused',
      defaultQuery: { 'api-version': '2024-10-21' },
      maxRetries: 0,
    });
    const text = await deployment.audio.transcriptions.create({ file: await toFile(Buffer.alloc(16000), 'a.wav'), response_format: 'json' } as any);
    expect(text).toEqual({ text: 'Transcript of a.wav, 16000 bytes', usage: { type: 'duration', seconds: 1 } });

    const noVersion = await fetch(`${mock.url}/openai/files`);
    expect(noVersion.status).toBe(404);
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.mp3');
    const noVersionUpload = await fetch(`${mock.url}/openai/deployments/my-whisper/audio/translations`, { method: 'POST', body: form });
    expect(noVersionUpload.status).toBe(404);
    // Groq's base (/openai/v1) needs no api-version.
    const groq = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'gsk', maxRetries: 0 });
    expect(await groq.audio.transcriptions.create({ model: 'whisper-large-v3', file: await toFile(Buffer.alloc(8000), 'g.mp3') })).toMatchObject({
      text: 'Transcript of g.mp3, 8000 bytes',
    });
  });

  it('streams a large upload without keeping it, and notes a client that goes away', async () => {
    const size = 40 * 1024 * 1024;
    const boundary = '----mockselftest' + Date.now();
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = pattern(1024 * 1024, 13);
    const hash = createHash('sha256');
    const send = (chunks: number, finish: boolean) =>
      new Promise<{ status: number; body: any } | 'aborted'>((resolve, reject) => {
        const req = http.request(
          `${mock.url}/v1/files`,
          {
            method: 'POST',
            headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('error', (error) => (finish ? reject(error) : resolve('aborted')));
        req.write(head);
        let sent = 0;
        const pump = () => {
          while (sent < chunks) {
            sent++;
            if (finish) hash.update(chunk);
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (finish) req.end(tail);
          else setTimeout(() => req.destroy(), 50);
        };
        pump();
      });
    const answer = await send(size / chunk.length, true);
    expect(answer).toMatchObject({ status: 200, body: { bytes: size, filename: 'big.bin', purpose: 'user_data' } });
    expect(uploadsOf(mock)[0].files[0]).toEqual({
      field: 'file',
      filename: 'big.bin',
      contentType: 'application/octet-stream',
      size,
      sha256: hash.digest('hex'),
    });
    const content = await fetch(`${mock.url}/v1/files/${(answer as any).body.id}/content`);
    expect(content.status).toBe(400); // over 16 MB: the mock kept only its hash

    mock.reset();
    expect(await send(5, false)).toBe('aborted');
    const deadline = Date.now() + 2000;
    while (!uploadsOf(mock)[0]?.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(uploadsOf(mock)[0]).toMatchObject({ aborted: true, complete: false });
  });
});
