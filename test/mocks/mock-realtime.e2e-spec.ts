/**
 * Self-test of the mock OpenAI Realtime upstream, driven directly with a `ws` client.
 */
import {
  AUDIO_DELTA_BYTES,
  audioDelta,
  connectRealtime,
  FLOOD_DELTAS,
  openRealtime,
  REALTIME_RESPONSE_COST_USD,
  REALTIME_USAGE,
  REPLY_TEXT,
  startMockRealtime,
  type MockRealtime,
} from '../support/mock-openai-realtime';

const userMessage = (text: string) => ({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });

async function waitUntil(check: () => unknown, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('mock OpenAI Realtime upstream', () => {
  let mock: MockRealtime;
  beforeAll(async () => {
    mock = await startMockRealtime();
  });
  afterAll(() => mock?.close());
  beforeEach(() => mock.reset());

  const openai = (query = '?model=gpt-realtime') => `${mock.url}/v1/realtime${query}`;
  const auth = { authorization: 'Bearer sk-test', 'openai-beta': 'realtime=v1' };

  it('refuses a handshake without a key (401), without a model (400), on an unknown path (404), recording none as a connection', async () => {
    const noKey = await connectRealtime(openai());
    expect(noKey).toMatchObject({ ok: false, status: 401, body: { error: { type: 'invalid_request_error', code: 'missing_api_key' } } });
    const noModel = await connectRealtime(openai(''), { headers: auth });
    expect(noModel).toMatchObject({ ok: false, status: 400, body: { error: { param: 'model' } } });
    const unknown = await connectRealtime(`${mock.url}/v1/nope?model=x`, { headers: auth });
    expect(unknown).toMatchObject({ ok: false, status: 404 });
    const azureNoKey = await connectRealtime(`${mock.url}/openai/realtime?api-version=2024-10-01-preview&deployment=d`);
    expect(azureNoKey).toMatchObject({ ok: false, status: 401 });
    const azureNoVersion = await connectRealtime(`${mock.url}/openai/realtime?deployment=d`, { headers: { 'api-key': 'k' } });
    expect(azureNoVersion).toMatchObject({ ok: false, status: 404 });
    expect(mock.connections).toHaveLength(0);
    expect(mock.refused.map((r) => r.status)).toEqual([401, 400, 404, 401, 404]);
  });

  it('plays a session: session.created, updates, items, audio commit, and a full audio response with usage', async () => {
    const client = await openRealtime(openai(), { headers: auth });
    const created = await client.waitForEvent('session.created');
    expect(created).toMatchObject({
      event_id: expect.stringMatching(/^event_/),
      session: { id: expect.stringMatching(/^sess_/), object: 'realtime.session', model: 'gpt-realtime', modalities: ['text', 'audio'], voice: 'alloy' },
    });
    expect(mock.connections[0]).toMatchObject({
      path: '/v1/realtime',
      query: { model: 'gpt-realtime' },
      headers: { authorization: 'Bearer sk-test' },
      route: 'openai',
    });

    client.send({ type: 'session.update', event_id: 'evt_1', session: { voice: 'verse', instructions: 'Be brief.' } });
    expect((await client.waitForEvent('session.updated')).session).toMatchObject({ voice: 'verse', instructions: 'Be brief.', model: 'gpt-realtime' });

    client.send(userMessage('Hi there'));
    const item = await client.waitForEvent('conversation.item.created');
    expect(item.item).toMatchObject({ object: 'realtime.item', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi there' }] });

    const audio = Buffer.alloc(4800, 7).toString('base64');
    client.send({ type: 'input_audio_buffer.append', audio });
    client.send({ type: 'input_audio_buffer.append', audio });
    const before = client.events.length;
    client.send({ type: 'input_audio_buffer.commit' });
    const committed = await client.waitForEvent('input_audio_buffer.committed', { from: before });
    const audioItem = await client.waitForEvent('conversation.item.created', { from: before });
    expect(audioItem.item).toMatchObject({ id: committed.item_id, role: 'user', content: [{ type: 'input_audio' }] });
    expect(committed.previous_item_id).toBe(item.item.id);
    expect(client.events.slice(before).map((e) => e.type)).toEqual(['input_audio_buffer.committed', 'conversation.item.created']);
    expect(mock.connections[0].audioBytesReceived).toBe(9600);

    const start = client.events.length;
    client.send({ type: 'response.create' });
    const done = await client.waitForEvent('response.done', { from: start });
    const types = client.events.slice(start).map((e) => e.type);
    expect(types).toEqual([
      'response.created',
      'rate_limits.updated',
      'response.output_item.added',
      'conversation.item.created',
      'response.content_part.added',
      'response.audio_transcript.delta',
      'response.audio.delta',
      'response.audio_transcript.delta',
      'response.audio.delta',
      'response.audio_transcript.delta',
      'response.audio.delta',
      'response.audio_transcript.delta',
      'response.audio.done',
      'response.audio_transcript.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.done',
    ]);
    const deltas = client.events.slice(start).filter((e) => e.type === 'response.audio.delta');
    expect(deltas.map((d) => d.delta)).toEqual([audioDelta(0), audioDelta(1), audioDelta(2)]);
    expect(deltas[0].delta).toHaveLength(16_384);
    expect(Buffer.from(deltas[0].delta, 'base64')).toHaveLength(AUDIO_DELTA_BYTES);
    expect(done.response).toMatchObject({
      object: 'realtime.response',
      status: 'completed',
      usage: REALTIME_USAGE,
      output: [{ role: 'assistant', content: [{ type: 'audio', transcript: REPLY_TEXT }] }],
    });
    expect(REALTIME_RESPONSE_COST_USD).toBeCloseTo(0.02474, 10);
    // every event sent is recorded, in the order the client saw them
    expect(mock.connections[0].sent.map((e) => e.event_id)).toEqual(client.events.map((e) => e.event_id));
    expect(mock.connections[0].received.map((e) => e.type)).toEqual([
      'session.update',
      'conversation.item.create',
      'input_audio_buffer.append',
      'input_audio_buffer.append',
      'input_audio_buffer.commit',
      'response.create',
    ]);

    client.ws.close(1000, 'bye');
    await waitUntil(() => mock.connections[0].closedBy);
    expect(mock.connections[0]).toMatchObject({ closedBy: 'client', closeCode: 1000, closeReason: 'bye' });
  });

  it('answers text only when asked, and errors on unknown events, bad JSON, an empty commit and a needless cancel', async () => {
    const client = await openRealtime(openai(), { headers: auth });
    await client.waitForEvent('session.created');
    client.send({ type: 'response.create', response: { modalities: ['text'] } });
    const done = await client.waitForEvent('response.done');
    expect(
      client.events
        .filter((e) => e.type === 'response.text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe(REPLY_TEXT);
    expect(client.events.some((e) => e.type === 'response.audio.delta')).toBe(false);
    expect(done.response.usage.output_token_details).toEqual({ text_tokens: 20, audio_tokens: 0 });

    let from = client.events.length;
    client.send({ type: 'nonsense', event_id: 'evt_x' });
    expect((await client.waitForEvent('error', { from })).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'type',
      event_id: 'evt_x',
    });
    from = client.events.length;
    client.ws.send('{not json');
    expect((await client.waitForEvent('error', { from })).error.code).toBe('invalid_json');
    from = client.events.length;
    client.send({ type: 'input_audio_buffer.commit' });
    expect((await client.waitForEvent('error', { from })).error.code).toBe('input_audio_buffer_commit_empty');
    from = client.events.length;
    client.send({ type: 'response.cancel' });
    expect((await client.waitForEvent('error', { from })).error.code).toBe('response_cancel_not_active');
    client.ws.close();
  });

  it('close-me: the server closes with 1011 "mock server error"', async () => {
    const client = await openRealtime(openai(), { headers: auth });
    client.send(userMessage('close-me'));
    const closed = await client.waitForClose();
    expect(closed).toMatchObject({ code: 1011, reason: 'mock server error' });
    await waitUntil(() => mock.connections[0].closedBy);
    expect(mock.connections[0]).toMatchObject({ closedBy: 'server', closeCode: 1011 });
  });

  it('flood: 2,000 audio deltas of 16 KB, in order, then response.done', async () => {
    const client = await openRealtime(openai(), { headers: auth });
    client.send(userMessage('flood'));
    client.send({ type: 'response.create' });
    await client.waitForEvent('response.done', { timeoutMs: 20_000 });
    const deltas = client.events.filter((e) => e.type === 'response.audio.delta');
    expect(deltas).toHaveLength(FLOOD_DELTAS);
    deltas.forEach((d, i) => {
      if (d.delta !== audioDelta(i)) throw new Error(`delta ${i} differs`);
    });
    client.ws.close();
  }, 30_000);

  it('slow: the response starts 500 ms after response.create; a cancel during it ends it as cancelled', async () => {
    const client = await openRealtime(openai(), { headers: auth });
    client.send(userMessage('slow'));
    const sent = Date.now();
    client.send({ type: 'response.create' });
    await client.waitForEvent('response.created');
    expect(Date.now() - sent).toBeGreaterThanOrEqual(450);
    await client.waitForEvent('response.done');

    client.send(userMessage('slow'));
    const from = client.events.length;
    client.send({ type: 'response.create' });
    client.send({ type: 'response.cancel' });
    const cancelled = await client.waitForEvent('response.done', { from });
    expect(cancelled.response.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 600));
    expect(client.events.slice(from).some((e) => e.type === 'response.created')).toBe(false);
    client.ws.close();
  });

  it('Azure: /openai/realtime with api-key, the deployment as the model; browser subprotocols', async () => {
    const azure = await openRealtime(`${mock.url}/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-realtime`, {
      headers: { 'api-key': 'azure-secret' },
    });
    expect((await azure.waitForEvent('session.created')).session.model).toBe('gpt-realtime');
    expect(mock.connections[0]).toMatchObject({
      route: 'azure',
      query: { 'api-version': '2024-10-01-preview', deployment: 'gpt-realtime' },
      headers: { 'api-key': 'azure-secret' },
    });
    azure.ws.close();

    const browser = await openRealtime(openai(), { protocols: ['realtime', 'openai-insecure-api-key.sk-browser', 'openai-beta.realtime-v1'] });
    expect(browser.ws.protocol).toBe('realtime');
    expect(mock.connections[1].protocols).toEqual(['realtime', 'openai-insecure-api-key.sk-browser', 'openai-beta.realtime-v1']);
    await browser.waitForEvent('session.created');
    browser.ws.close();
  });

  it('GA mode speaks the GA event names', async () => {
    const ga = await startMockRealtime({ ga: true });
    try {
      const client = await openRealtime(`${ga.url}/v1/realtime?model=gpt-realtime`, { headers: { authorization: 'Bearer sk' } });
      expect((await client.waitForEvent('session.created')).session).toMatchObject({ type: 'realtime', output_modalities: ['audio'] });
      client.send({ type: 'response.create' });
      await client.waitForEvent('response.done');
      expect(client.events.filter((e) => e.type === 'response.output_audio.delta')).toHaveLength(3);
      expect(client.events.some((e) => e.type.startsWith('response.audio'))).toBe(false);
      client.ws.close();
    } finally {
      await ga.close();
    }
  });

  it('close() ends open sessions as closedBy server', async () => {
    const other = await startMockRealtime();
    const client = await openRealtime(`${other.url}/v1/realtime?model=m`, { headers: auth });
    await client.waitForEvent('session.created');
    await other.close();
    expect((await client.waitForClose()).code).toBe(1001);
    expect(other.connections[0].closedBy).toBe('server');
  });
});
