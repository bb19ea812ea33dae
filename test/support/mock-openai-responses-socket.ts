/**
 * OpenAI's Responses API in WebSocket mode, on the mock upstream's own port (plain HTTP only):
 * `GET /v1/responses` upgraded to a WebSocket (`wss://api.openai.com/v1/responses`).
 *
 *   - Handshake: `Authorization: Bearer …` required, else HTTP 401 with OpenAI's error JSON;
 *     another path: HTTP 404. Each accepted connection is recorded (`connections`: the
 *     handshake's headers and every client event, parsed).
 *   - Client events (JSON text messages): `response.create` with the fields of `POST
 *     /v1/responses` beside `type` (checked as the HTTP create is, `stream` and `background`
 *     refused as OpenAI refuses them over the socket): the response's stream events, each a
 *     text message of the event's JSON (no SSE framing), as the HTTP stream would send them;
 *     `previous_response_id` must name a response of the same connection. A body error,
 *     another event type or a message that is not JSON: one `error` event
 *     `{type: "error", status: 400, error: {type, code, message, param}}`; the connection stays.
 *   - `generate: false` (Codex's prewarm before a turn): a completed response without output,
 *     its input counted, nothing generated.
 *   - One response at a time, in the order asked; the model `mock-stream-failed` ends with
 *     `response.failed`; `mock-socket-close` closes the connection (1011) after `response.created`.
 */
import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { newId, planResponse, responseEvents, responseObject } from './mock-openai-responses-body';
import { invalidCreateBody } from './mock-openai-responses-validate';

export interface ResponsesSocketConnection {
  headers: http.IncomingHttpHeaders;
  /** The client's events, parsed, in order. */
  events: any[];
}

const FAILURE = { code: 'server_error', message: 'The model failed to generate a response.' };

/** Serves WebSocket mode on `server`'s upgrades; `connections` is filled as clients connect. */
export function serveResponsesSocket(server: http.Server, connections: ResponsesSocketConnection[]): void {
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    const refuse = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
      );
    };
    if (path !== '/v1/responses') return refuse(404, { error: { message: 'Invalid URL', type: 'invalid_request_error', param: null, code: null } });
    if (!/^Bearer\s+\S/i.test(String(req.headers.authorization ?? ''))) {
      return refuse(401, { error: { message: "You didn't provide an API key.", type: 'invalid_request_error', param: null, code: null } });
    }
    wss.handleUpgrade(req, socket, head, (client) => {
      const connection: ResponsesSocketConnection = { headers: req.headers, events: [] };
      connections.push(connection);
      serveConnection(client, connection);
    });
  });
}

function serveConnection(client: WebSocket, connection: ResponsesSocketConnection): void {
  const outputs = new Map<string, any[]>();
  let queue = Promise.resolve();
  const send = (event: unknown): void => {
    if (client.readyState === client.OPEN) client.send(JSON.stringify(event));
  };
  const error = (message: string, code: string | null = null, param: string | null = null) =>
    send({ type: 'error', status: 400, error: { type: 'invalid_request_error', code, message, param } });
  client.on('message', (data) => {
    let event: any;
    try {
      event = JSON.parse((Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString('utf8'));
    } catch {
      return error('The message is not valid JSON.');
    }
    connection.events.push(event);
    queue = queue.then(() => answer(event));
  });

  async function answer(event: any): Promise<void> {
    if (event?.type !== 'response.create') return error(`Unsupported event type '${String(event?.type)}'.`, 'unknown_event_type', 'type');
    // `stream` is implied (Codex sends `stream: true` all the same, and OpenAI takes it).
    const { type: _type, stream: _stream, generate, ...body } = event;
    if (generate !== undefined && typeof generate !== 'boolean') return error("Invalid type for 'generate': expected a boolean.", 'invalid_type', 'generate');
    if (body.background === true) return error('background is not supported over WebSocket.', 'unsupported_parameter', 'background');
    const invalid = invalidCreateBody(body, false);
    if (invalid) {
      const parsed = JSON.parse(invalid).error;
      return error(parsed.message, parsed.code, parsed.param);
    }
    const earlier = body.previous_response_id == null ? [] : outputs.get(body.previous_response_id);
    if (!earlier) return error(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_not_found', 'previous_response_id');
    const model: string = body.model;
    const behaviourModel = model.slice(model.lastIndexOf('/') + 1);
    const plan = planResponse(body, behaviourModel, earlier);
    const id = newId('resp_');
    const createdAt = Math.floor(Date.now() / 1000);
    // `generate: false` (Codex's prewarm): the input is taken in and nothing is generated.
    const prewarm = generate === false;
    const usage = prewarm
      ? { ...plan.usage, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: plan.usage.input_tokens }
      : plan.usage;
    const final =
      behaviourModel === 'mock-stream-failed'
        ? responseObject(body, id, createdAt, 'failed', [], null, FAILURE)
        : responseObject(body, id, createdAt, 'completed', prewarm ? [] : plan.output, usage);
    outputs.set(id, [...earlier, ...(Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input }]), ...final.output]);
    for (const streamed of responseEvents(final)) {
      send(streamed);
      if (behaviourModel === 'mock-socket-close' && streamed.type === 'response.created') {
        client.close(1011, 'mock closed the connection');
        return;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
