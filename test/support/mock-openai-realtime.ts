/**
 * A mock of OpenAI's Realtime API (a WebSocket carrying JSON events), for the gateway's
 * realtime relay tests. Event shapes follow OpenAI's beta Realtime interface (the one
 * clients get with `OpenAI-Beta: realtime=v1`, and Azure OpenAI's preview api-versions):
 * `response.audio.delta`, `response.audio_transcript.delta`, `response.text.delta`,
 * session `modalities`. `startMockRealtime({ ga: true })` speaks the GA names instead
 * (`response.output_audio.delta`, `response.output_audio_transcript.delta`,
 * `response.output_text.delta`, `conversation.item.added` + `.done`, session
 * `type: 'realtime'` and `output_modalities`).
 *
 * Routes (anything else: HTTP 404 at the handshake, OpenAI's error JSON)
 *   /v1/realtime?model=…        OpenAI. Needs `Authorization: Bearer …` (or the browser
 *                               subprotocol `openai-insecure-api-key.<key>`), else HTTP 401;
 *                               no `model`: HTTP 400.
 *   /openai/realtime?api-version=…&deployment=…   Azure OpenAI. Needs `api-key` (or an
 *                               `Authorization: Bearer` Entra token), else 401; no
 *                               api-version: 404; no deployment: 400.
 * A refused handshake is recorded in `refused`, never in `connections`.
 * Subprotocols: the mock selects `realtime` when offered, else the first one offered.
 *
 * Events (client → server)
 *   session.update              → session.updated (the session with the update merged in)
 *   conversation.item.create    → conversation.item.created (GA: conversation.item.added + .done)
 *   input_audio_buffer.append   → nothing (the audio is counted)
 *   input_audio_buffer.commit   → input_audio_buffer.committed + conversation.item.created
 *                                 (an empty buffer: an `error` event, input_audio_buffer_commit_empty)
 *   input_audio_buffer.clear    → input_audio_buffer.cleared
 *   response.create             → response.created, rate_limits.updated, response.output_item.added,
 *                                 conversation.item.created, response.content_part.added, then
 *                                 with audio (the default; modalities ['audio','text']):
 *                                   4 response.audio_transcript.delta ("Hello ", "from ", "mock ",
 *                                   "realtime") interleaved with 3 response.audio.delta, each
 *                                   `audioDelta(n)`: 12,288 bytes = 16,384 base64 chars,
 *                                   response.audio.done, response.audio_transcript.done,
 *                                 text only (modalities ['text'] on the session or the response):
 *                                   4 response.text.delta, response.text.done,
 *                                 then response.content_part.done, response.output_item.done,
 *                                 response.done (status completed, the output item and usage).
 *   response.cancel             → an active (slow/flood) response stops with response.done
 *                                 status 'cancelled'; none active: `error` response_cancel_not_active
 *   anything else / not JSON    → an `error` event (invalid_request_error)
 *
 * Usage of every response.done (REALTIME_USAGE; text-only responses: REALTIME_TEXT_USAGE):
 *   input:  text 100 (0 cached) + audio 200 (50 cached) = 300, cached_tokens 50
 *   output: text 20 + audio 300 = 320 (text only: text 20, audio 0 = 20)
 *   total 620 (text only: 320)
 * Priced with gpt-realtime's rates ($ per 1M: text in 4, cached text 0.40, audio in 32,
 * cached audio 0.40, text out 16, audio out 64) that is REALTIME_RESPONSE_COST_USD = 0.02474.
 *
 * Switches: the text of a user message (conversation.item.create, content `input_text`/`text`,
 * trimmed, exact):
 *   "close-me"  after conversation.item.created the server closes with 1011 "mock server error"
 *   "flood"     the next response sends FLOOD_DELTAS (2,000) response.audio.delta events of
 *               16 KB, in batches of 100 per event-loop turn without waiting for the socket
 *               to drain, then the usual closing events and response.done
 *   "slow"      the next response starts 500 ms after response.create
 *
 * Recording: `connections[i]` has the handshake (path, query, headers, protocols), every
 * client event parsed (`received`), every server event (`sent`; flood deltas included),
 * and how it ended: `closedBy` 'client' (the peer closed or dropped the socket) or 'server'
 * (close-me, close()), `closeCode`, `closeReason`, `closedAt` (Date.now()).
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface RealtimeConnection {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Subprotocols the client offered (Sec-WebSocket-Protocol), in order. */
  protocols: string[];
  /** The subprotocol the mock selected, if any. */
  protocol?: string;
  /** 'openai' or 'azure'. */
  route: 'openai' | 'azure';
  /** Every client event, parsed (a frame that is not JSON is kept as `{ unparsed: text }`). */
  received: any[];
  /** Every event the mock sent, in order. */
  sent: any[];
  /** Bytes of audio appended with input_audio_buffer.append (base64 decoded), over the session. */
  audioBytesReceived: number;
  openedAt: number;
  closedBy?: 'client' | 'server';
  closeCode?: number;
  closeReason?: string;
  closedAt?: number;
  /** The server-side socket, for tests that want to act on it directly. */
  socket: WebSocket;
}

export interface RefusedHandshake {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  status: number;
}

export interface MockRealtime {
  /** ws://127.0.0.1:PORT (no path) */
  url: string;
  port: number;
  connections: RealtimeConnection[];
  refused: RefusedHandshake[];
  /** Forgets the recordings (arrays emptied in place); open sockets stay open. */
  reset(): void;
  /** Closes every socket (closedBy 'server', 1001) and the server. */
  close(): Promise<void>;
}

export interface MockRealtimeOptions {
  /** Speak the GA Realtime event names instead of the beta ones. */
  ga?: boolean;
}

export const AUDIO_DELTA_BYTES = 12_288; // 16,384 base64 characters
export const FLOOD_DELTAS = 2_000;
export const SLOW_MS = 500;
export const REPLY_WORDS = ['Hello ', 'from ', 'mock ', 'realtime'];
export const REPLY_TEXT = REPLY_WORDS.join('');

export const REALTIME_USAGE = {
  total_tokens: 620,
  input_tokens: 300,
  output_tokens: 320,
  input_token_details: {
    cached_tokens: 50,
    text_tokens: 100,
    audio_tokens: 200,
    image_tokens: 0,
    cached_tokens_details: { text_tokens: 0, audio_tokens: 50, image_tokens: 0 },
  },
  output_token_details: { text_tokens: 20, audio_tokens: 300 },
};
export const REALTIME_TEXT_USAGE = {
  ...REALTIME_USAGE,
  total_tokens: 320,
  output_tokens: 20,
  output_token_details: { text_tokens: 20, audio_tokens: 0 },
};
/** What `rate_limits.updated` reports (fixed). */
export const RATE_LIMITS = [
  { name: 'requests', limit: 5000, remaining: 4999, reset_seconds: 0.012 },
  { name: 'tokens', limit: 4_000_000, remaining: 3_995_000, reset_seconds: 0.075 },
];
/** gpt-realtime's price of one REALTIME_USAGE, in USD. */
export const REALTIME_RESPONSE_COST_USD = (100 * 4 + 0 * 0.4 + 150 * 32 + 50 * 0.4 + 20 * 16 + 300 * 64) / 1e6;

/** The `n`-th audio delta a mock response sends (n counts per connection from 0): base64 of 12,288 deterministic bytes. */
export function audioDelta(n: number): string {
  const bytes = Buffer.alloc(AUDIO_DELTA_BYTES);
  bytes.writeUInt32BE(n, 0);
  for (let i = 4; i < bytes.length; i++) bytes[i] = (i * 31 + n * 7) & 0xff;
  return bytes.toString('base64');
}

const BETA_NAMES = {
  audioDelta: 'response.audio.delta',
  audioDone: 'response.audio.done',
  transcriptDelta: 'response.audio_transcript.delta',
  transcriptDone: 'response.audio_transcript.done',
  textDelta: 'response.text.delta',
  textDone: 'response.text.done',
};
const GA_NAMES = {
  audioDelta: 'response.output_audio.delta',
  audioDone: 'response.output_audio.done',
  transcriptDelta: 'response.output_audio_transcript.delta',
  transcriptDone: 'response.output_audio_transcript.done',
  textDelta: 'response.output_text.delta',
  textDone: 'response.output_text.done',
};

const CLIENT_EVENTS = [
  'session.update',
  'input_audio_buffer.append',
  'input_audio_buffer.commit',
  'input_audio_buffer.clear',
  'conversation.item.create',
  'conversation.item.truncate',
  'conversation.item.delete',
  'conversation.item.retrieve',
  'response.create',
  'response.cancel',
  'output_audio_buffer.clear',
];

function errorJson(message: string, type: string, code: string | null = null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

function parseQuery(url: string): { path: string; query: Record<string, string> } {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return { path, query: q === -1 ? {} : Object.fromEntries(new URLSearchParams(url.slice(q + 1))) };
}

function offeredProtocols(req: http.IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

let idCounter = 0;
const id = (prefix: string): string => `${prefix}_${randomBytes(6).toString('hex')}${(++idCounter).toString(36).padStart(4, '0')}`;

/** Text of a user message's content (input_text / text parts). */
function userText(item: any): string | undefined {
  if (!item || item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content)) return undefined;
  return item.content
    .filter((part: any) => part && (part.type === 'input_text' || part.type === 'text') && typeof part.text === 'string')
    .map((part: any) => part.text)
    .join('');
}

export async function startMockRealtime(options: MockRealtimeOptions = {}): Promise<MockRealtime> {
  const ga = options.ga ?? false;
  const names = ga ? GA_NAMES : BETA_NAMES;
  const connections: RealtimeConnection[] = [];
  const refused: RefusedHandshake[] = [];
  const sockets = new Set<WebSocket>();

  const server = http.createServer((req, res) => {
    const body = errorJson('This endpoint only accepts WebSocket upgrades.', 'invalid_request_error');
    res.writeHead(426, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), upgrade: 'websocket' });
    res.end(body);
  });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024 * 1024,
    handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : (protocols.values().next().value ?? false)),
  });

  function refuse(socket: import('node:stream').Duplex, req: http.IncomingMessage, status: number, body: string): void {
    const { path, query } = parseQuery(req.url ?? '/');
    refused.push({ path, query, headers: req.headers, status });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
        'content-type: application/json\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  }

  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => undefined);
    const { path, query } = parseQuery(req.url ?? '/');
    const protocols = offeredProtocols(req);
    const bearer = /^Bearer\s+\S+/i.test(String(req.headers.authorization ?? ''));
    let route: 'openai' | 'azure';
    let model: string;
    if (path === '/v1/realtime') {
      route = 'openai';
      const subprotocolKey = protocols.some((p) => p.startsWith('openai-insecure-api-key.') && p.length > 'openai-insecure-api-key.'.length);
      if (!bearer && !subprotocolKey) {
        return refuse(
          socket,
          req,
          401,
          errorJson(
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            'invalid_request_error',
            'missing_api_key',
          ),
        );
      }
      if (!query.model)
        return refuse(socket, req, 400, errorJson("Missing required parameter: 'model'.", 'invalid_request_error', 'missing_required_parameter', 'model'));
      model = query.model;
    } else if (path === '/openai/realtime') {
      route = 'azure';
      if (!req.headers['api-key'] && !bearer) {
        return refuse(
          socket,
          req,
          401,
          JSON.stringify({
            error: {
              code: '401',
              message:
                'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
            },
          }),
        );
      }
      if (!query['api-version'])
        return refuse(socket, req, 404, errorJson('Resource not found: missing api-version query parameter', 'invalid_request_error', '404'));
      if (!query.deployment)
        return refuse(
          socket,
          req,
          400,
          errorJson("Missing required parameter: 'deployment'.", 'invalid_request_error', 'missing_required_parameter', 'deployment'),
        );
      model = query.deployment;
    } else {
      return refuse(socket, req, 404, errorJson(`Invalid URL (GET ${path})`, 'invalid_request_error'));
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      const connection: RealtimeConnection = {
        path,
        query,
        headers: req.headers,
        protocols,
        protocol: ws.protocol || undefined,
        route,
        received: [],
        sent: [],
        audioBytesReceived: 0,
        openedAt: Date.now(),
        socket: ws,
      };
      connections.push(connection);
      serveSession(ws, connection, model);
    });
  });

  function serveSession(ws: WebSocket, connection: RealtimeConnection, model: string): void {
    let serverClosing = false;
    let audioBuffer = 0;
    let lastItemId: string | null = null;
    let deltaCount = 0;
    /** Mode of the next response, set by the last user message. */
    let nextMode: 'normal' | 'flood' | 'slow' = 'normal';
    let active: { id: string; cancelled: boolean; finish: (status: 'completed' | 'cancelled') => void } | undefined;
    const timers = new Set<NodeJS.Timeout>();
    const session: Record<string, any> = {
      id: id('sess'),
      object: 'realtime.session',
      ...(ga ? { type: 'realtime' } : {}),
      model,
      expires_at: Math.floor(Date.now() / 1000) + 30 * 60,
      ...(ga ? { output_modalities: ['audio'] } : { modalities: ['text', 'audio'] }),
      instructions: 'Your knowledge cutoff is 2023-10. You are a helpful, witty, and friendly AI.',
      voice: 'alloy',
      input_audio_format: 'pcm16',
      output_audio_format: 'pcm16',
      input_audio_transcription: null,
      turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 200, create_response: true, interrupt_response: true },
      tools: [],
      tool_choice: 'auto',
      temperature: 0.8,
      max_response_output_tokens: 'inf',
      tracing: null,
    };

    const send = (event: Record<string, any>): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      const full = { event_id: id('event'), ...event };
      connection.sent.push(full);
      ws.send(JSON.stringify(full));
    };
    const sendError = (message: string, code: string | null, param: string | null, clientEventId: string | null): void =>
      send({ type: 'error', error: { type: 'invalid_request_error', code, message, param, event_id: clientEventId } });

    ws.on('close', (code, reason) => {
      for (const t of timers) clearTimeout(t);
      sockets.delete(ws);
      if (active) active.cancelled = true;
      Object.assign(connection, { closedBy: serverClosing ? 'server' : 'client', closeCode: code, closeReason: reason.toString(), closedAt: Date.now() });
    });
    ws.on('error', () => undefined);
    (ws as any).closeFromServer = (code: number, reason: string) => {
      serverClosing = true;
      ws.close(code, reason);
    };

    send({ type: 'session.created', session: structuredClone(session) });

    ws.on('message', (data, isBinary) => {
      const text = isBinary ? Buffer.from(data as Buffer).toString() : data.toString();
      let event: any;
      try {
        event = JSON.parse(text);
      } catch {
        connection.received.push({ unparsed: text });
        return sendError(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.",
          'invalid_json',
          null,
          null,
        );
      }
      connection.received.push(event);
      if (event === null || typeof event !== 'object' || Array.isArray(event)) return sendError('The event must be a JSON object.', 'invalid_type', null, null);
      const clientEventId = typeof event.event_id === 'string' ? event.event_id : null;
      if (!CLIENT_EVENTS.includes(event.type)) {
        return sendError(
          `Invalid value: '${String(event.type)}'. Supported values are: ${CLIENT_EVENTS.map((t) => `'${t}'`).join(', ')}.`,
          'invalid_value',
          'type',
          clientEventId,
        );
      }
      switch (event.type) {
        case 'session.update': {
          const update = event.session && typeof event.session === 'object' ? event.session : {};
          for (const [key, value] of Object.entries(update)) if (key !== 'id' && key !== 'object') session[key] = value;
          return send({ type: 'session.updated', session: structuredClone(session) });
        }
        case 'conversation.item.create': {
          const item = event.item ?? {};
          const created = {
            id: typeof item.id === 'string' ? item.id : id('item'),
            object: 'realtime.item',
            type: item.type ?? 'message',
            status: 'completed',
            ...(item.role ? { role: item.role } : {}),
            ...(item.content ? { content: item.content } : {}),
            ...(item.call_id ? { call_id: item.call_id } : {}),
            ...(item.output !== undefined ? { output: item.output } : {}),
          };
          const previous = event.previous_item_id ?? lastItemId;
          lastItemId = created.id;
          if (ga) {
            send({ type: 'conversation.item.added', previous_item_id: previous, item: created });
            send({ type: 'conversation.item.done', previous_item_id: previous, item: created });
          } else {
            send({ type: 'conversation.item.created', previous_item_id: previous, item: created });
          }
          const said = userText(item)?.trim();
          if (said === 'close-me') {
            serverClosing = true;
            ws.close(1011, 'mock server error');
          } else if (said === 'flood') nextMode = 'flood';
          else if (said === 'slow') nextMode = 'slow';
          return;
        }
        case 'input_audio_buffer.append':
          if (typeof event.audio === 'string') {
            const bytes = Buffer.from(event.audio, 'base64').length;
            audioBuffer += bytes;
            connection.audioBytesReceived += bytes;
          }
          return;
        case 'input_audio_buffer.commit': {
          if (audioBuffer === 0) {
            return sendError(
              'Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has 0.00ms of audio.',
              'input_audio_buffer_commit_empty',
              null,
              clientEventId,
            );
          }
          audioBuffer = 0;
          const itemId = id('item');
          const previous = lastItemId;
          lastItemId = itemId;
          send({ type: 'input_audio_buffer.committed', previous_item_id: previous, item_id: itemId });
          const item = {
            id: itemId,
            object: 'realtime.item',
            type: 'message',
            status: 'completed',
            role: 'user',
            content: [{ type: 'input_audio', transcript: null }],
          };
          if (ga) {
            send({ type: 'conversation.item.added', previous_item_id: previous, item });
            send({ type: 'conversation.item.done', previous_item_id: previous, item });
          } else send({ type: 'conversation.item.created', previous_item_id: previous, item });
          return;
        }
        case 'input_audio_buffer.clear':
          audioBuffer = 0;
          return send({ type: 'input_audio_buffer.cleared' });
        case 'response.cancel':
          if (!active) return sendError('Cancellation failed: no active response found', 'response_cancel_not_active', null, clientEventId);
          active.cancelled = true;
          active.finish('cancelled');
          return;
        case 'response.create': {
          if (active)
            return sendError(
              `Conversation already has an active response in progress: ${active.id}. Wait until the response is finished before creating a new one.`,
              'conversation_already_has_active_response',
              null,
              clientEventId,
            );
          const mode = nextMode;
          nextMode = 'normal';
          return respond(event.response && typeof event.response === 'object' ? event.response : {}, mode);
        }
        default:
          // conversation.item.truncate/delete/retrieve, output_audio_buffer.clear: not modelled
          return sendError(`The mock does not implement '${event.type}'.`, 'unsupported_event', 'type', clientEventId);
      }
    });

    function respond(params: Record<string, any>, mode: 'normal' | 'flood' | 'slow'): void {
      const modalities: string[] = params.output_modalities ?? params.modalities ?? session.output_modalities ?? session.modalities ?? ['text', 'audio'];
      const withAudio = modalities.includes('audio');
      const responseId = id('resp');
      const itemId = id('item');
      const base = {
        id: responseId,
        object: 'realtime.response',
        conversation_id: id('conv'),
        ...(ga ? { output_modalities: withAudio ? ['audio'] : ['text'] } : { modalities: withAudio ? ['text', 'audio'] : ['text'] }),
        voice: params.voice ?? session.voice,
        output_audio_format: session.output_audio_format,
        temperature: session.temperature,
        max_output_tokens: params.max_output_tokens ?? session.max_response_output_tokens,
        metadata: params.metadata ?? null,
      };
      const partType = withAudio ? 'audio' : 'text';
      const where = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
      const emptyPart = withAudio ? { type: partType, transcript: '' } : { type: partType, text: '' };
      const fullPart = withAudio ? { type: partType, transcript: REPLY_TEXT } : { type: partType, text: REPLY_TEXT };
      const item = (status: string, content: any[]) => ({ id: itemId, object: 'realtime.item', type: 'message', status, role: 'assistant', content });

      let finished = false;
      const finish = (status: 'completed' | 'cancelled'): void => {
        if (finished) return;
        finished = true;
        active = undefined;
        if (status === 'completed') {
          if (withAudio) {
            send({ type: names.audioDone, ...where });
            send({ type: names.transcriptDone, ...where, transcript: REPLY_TEXT });
          } else send({ type: names.textDone, ...where, text: REPLY_TEXT });
          send({ type: 'response.content_part.done', ...where, part: fullPart });
        }
        const doneItem = item(status === 'completed' ? 'completed' : 'incomplete', [fullPart]);
        if (status === 'completed') send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: doneItem });
        send({
          type: 'response.done',
          response: {
            ...base,
            status,
            status_details: status === 'completed' ? null : { type: 'cancelled', reason: 'client_cancelled' },
            output: [doneItem],
            usage: withAudio ? REALTIME_USAGE : REALTIME_TEXT_USAGE,
          },
        });
      };
      const handle = { id: responseId, cancelled: false, finish };
      active = handle;

      const start = (): void => {
        if (handle.cancelled || ws.readyState !== WebSocket.OPEN) return;
        send({ type: 'response.created', response: { ...base, status: 'in_progress', status_details: null, output: [], usage: null } });
        send({ type: 'rate_limits.updated', rate_limits: RATE_LIMITS });
        send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item: item('in_progress', []) });
        const previous = lastItemId;
        lastItemId = itemId;
        if (ga) send({ type: 'conversation.item.added', previous_item_id: previous, item: item('in_progress', []) });
        else send({ type: 'conversation.item.created', previous_item_id: previous, item: item('in_progress', []) });
        send({ type: 'response.content_part.added', ...where, part: emptyPart });
        if (!withAudio) {
          for (const word of REPLY_WORDS) send({ type: names.textDelta, ...where, delta: word });
          return finish('completed');
        }
        if (mode !== 'flood') {
          for (let i = 0; i < REPLY_WORDS.length; i++) {
            send({ type: names.transcriptDelta, ...where, delta: REPLY_WORDS[i] });
            if (i < 3) send({ type: names.audioDelta, ...where, delta: audioDelta(deltaCount++) });
          }
          return finish('completed');
        }
        for (const word of REPLY_WORDS) send({ type: names.transcriptDelta, ...where, delta: word });
        let sentDeltas = 0;
        const batch = (): void => {
          if (handle.cancelled || ws.readyState !== WebSocket.OPEN) return;
          for (let i = 0; i < 100 && sentDeltas < FLOOD_DELTAS; i++, sentDeltas++) {
            send({ type: names.audioDelta, ...where, delta: audioDelta(deltaCount++) });
          }
          if (sentDeltas < FLOOD_DELTAS) setImmediate(batch);
          else finish('completed');
        };
        batch();
      };
      if (mode === 'slow') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          start();
        }, SLOW_MS);
        timers.add(timer);
      } else start();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    connections,
    refused,
    reset: () => {
      connections.length = 0;
      refused.length = 0;
    },
    close: () =>
      (closing ??= (async () => {
        const open = [...sockets];
        const closed = Promise.all(open.map((ws) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r())))));
        for (const ws of open) (ws as any).closeFromServer(1001, 'mock shutting down');
        const deadline = setTimeout(() => open.forEach((ws) => ws.terminate()), 500);
        await closed;
        clearTimeout(deadline);
        wss.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
}

/** A test client: a `ws` WebSocket that collects every event it receives, parsed. */
export interface RealtimeClient {
  ws: WebSocket;
  /** Every server event received, parsed, in order. */
  events: any[];
  /** Raw frames received (the text), in order, for byte-for-byte comparisons. */
  frames: string[];
  /** The headers of the 101 Switching Protocols answer. */
  upgradeHeaders: http.IncomingHttpHeaders;
  /** The close the client saw (set once closed). */
  closed?: { code: number; reason: string; at: number };
  send(event: Record<string, any>): void;
  /** Resolves with the first received event of that type after `from` (an index into events), waiting up to timeoutMs. */
  waitForEvent(type: string, options?: { from?: number; timeoutMs?: number }): Promise<any>;
  /** Resolves when the socket is closed. */
  waitForClose(timeoutMs?: number): Promise<{ code: number; reason: string; at: number }>;
}

export type HandshakeResult = { ok: true; client: RealtimeClient } | { ok: false; status: number; headers: http.IncomingHttpHeaders; text: string; body: any };

/** Opens a WebSocket; resolves once open (ok) or refused with an HTTP answer (the status and body). */
export function connectRealtime(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<HandshakeResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers, maxPayload: 256 * 1024 * 1024 });
    const events: any[] = [];
    const frames: string[] = [];
    const waiters = new Set<() => void>();
    const notify = () => {
      for (const w of [...waiters]) w();
    };
    const client: RealtimeClient = {
      ws,
      events,
      frames,
      upgradeHeaders: {},
      send: (event) => ws.send(JSON.stringify(event)),
      waitForEvent: (type, { from = 0, timeoutMs = 5000 } = {}) =>
        new Promise((res, rej) => {
          const check = (): boolean => {
            for (let i = from; i < events.length; i++) {
              if (events[i]?.type === type) {
                res(events[i]);
                return true;
              }
            }
            if (client.closed) {
              rej(new Error(`socket closed (${client.closed.code} ${client.closed.reason}) before a ${type} event`));
              return true;
            }
            return false;
          };
          if (check()) return;
          const waiter = () => {
            if (check()) {
              waiters.delete(waiter);
              clearTimeout(timer);
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(waiter);
            rej(
              new Error(
                `no ${type} event within ${timeoutMs} ms (got: ${events
                  .map((e) => e?.type)
                  .slice(-20)
                  .join(', ')})`,
              ),
            );
          }, timeoutMs);
          waiters.add(waiter);
        }),
      waitForClose: (timeoutMs = 5000) =>
        new Promise((res, rej) => {
          if (client.closed) return res(client.closed);
          const timer = setTimeout(() => rej(new Error(`socket not closed within ${timeoutMs} ms`)), timeoutMs);
          ws.once('close', () => {
            clearTimeout(timer);
            // the close listener below runs first (registered earlier)
            res(client.closed!);
          });
        }),
    };
    ws.on('message', (data) => {
      const text = data.toString();
      frames.push(text);
      try {
        events.push(JSON.parse(text));
      } catch {
        events.push({ unparsed: text });
      }
      notify();
    });
    ws.on('close', (code, reason) => {
      client.closed = { code, reason: reason.toString(), at: Date.now() };
      notify();
    });
    ws.once('upgrade', (res) => (client.upgradeHeaders = res.headers));
    ws.once('open', () => resolve({ ok: true, client }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ ok: false, status: res.statusCode ?? 0, headers: res.headers, text, body });
        ws.terminate();
      });
    });
    ws.on('error', (error) => {
      if (ws.readyState !== WebSocket.OPEN) reject(error);
    });
  });
}

/** connectRealtime that must succeed. */
export async function openRealtime(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<RealtimeClient> {
  const result = await connectRealtime(url, options);
  if (!result.ok) throw new Error(`handshake refused: HTTP ${result.status} ${result.text}`);
  return result.client;
}
