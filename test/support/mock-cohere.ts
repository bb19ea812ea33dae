/**
 * Cohere's v2 API in the mock upstream (mock-upstream.ts hands every request here first;
 * `serveCohere` answers true when it served it). The gateway's base is `{mock}/v2`.
 *
 * Routes
 *   POST /v2/chat    one chat response, or with `stream: true` Cohere's SSE events
 *                    (`event: <type>` + `data: {"type": <type>, …}`): message-start, content-start,
 *                    content-delta (one per word), content-end, or tool-plan-delta (one per word),
 *                    tool-call-start, tool-call-delta (argument fragments), tool-call-end; then
 *                    message-end with finish_reason and usage. No [DONE].
 *   POST /v2/embed   {id, texts, embeddings: {float: [[…]]}, meta: {api_version, billed_units: {input_tokens}},
 *                    response_type: "embeddings_by_type"}; vectors of 8 numbers (or output_dimension) made
 *                    from each text
 *   POST /v2/rerank  {id, results: [{index, relevance_score}] best first, cut to top_n,
 *                    meta: {api_version, billed_units: {search_units: ceil(documents / 100)}}};
 *                    the score of a document = the share of the query's words it contains (ties: index)
 *
 *   POST /v1/rerank  the same ranking in Jina's shape, as vLLM and other OpenAI-compatible servers serve it:
 *                    {id, model, usage: {total_tokens: ceil(chars of query + documents / 4)},
 *                    results: [{index, document: {text}, relevance_score}]}; documents may be {text} objects
 *
 * Checks, as Cohere answers them (errors are `{id, message}`):
 *   - `Authorization: Bearer <key>` required: 401 "no api key supplied"
 *   - a JSON object body: 400; top-level fields of the endpoint only: 400 "invalid request: unknown field:
 *     parameter '<field>' is not a valid field"
 *   - chat: model; messages non-empty, roles system | user | assistant | tool, a tool message with
 *     tool_call_id, tool_call_ids answering calls of an earlier assistant turn
 *   - embed: model, texts (strings), input_type and embedding_types (required by v3+ models)
 *   - rerank: model, query (string), documents (strings: v2 takes no objects)
 *
 * Replies (chat): "Hello from mock", or the rest of the last user text when it starts with "echo:";
 * with tools, a last user text mentioning "weather" and a last message that is no tool result: a
 * tool plan "I will look up the weather." and one call to the first tool with {"location":"Paris"},
 * finish_reason TOOL_CALL; max_tokens cuts the reply to that many words (MAX_TOKENS).
 * Usage: billed_units input_tokens = ceil(chars of the message texts / 4) (min 1), output_tokens =
 * words (tool call: 5); tokens adds 7 input tokens of Cohere's prompt template, as Cohere reports.
 * Behaviour switches by model name (see mock-upstream.ts): mock-error-<status>, mock-slow-<ms>,
 * mock-hang, mock-drop, mock-flaky-<n>-<status>, mock-invalid-json, mock-stream-cut.
 */
import type * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { MockCall } from './mock-call';
import { DEFAULT_REPLY, TOOL_CALL_ARGUMENT_FRAGMENTS, splitWords } from './mock-openai-chunks';
import { streamEvents } from './mock-sse';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, sendJson } from './mock-upstream';

const FIELDS: Record<string, Set<string>> = {
  '/v2/chat': new Set([
    'model',
    'messages',
    'stream',
    'tools',
    'strict_tools',
    'documents',
    'citation_options',
    'response_format',
    'safety_mode',
    'max_tokens',
    'stop_sequences',
    'temperature',
    'seed',
    'frequency_penalty',
    'presence_penalty',
    'k',
    'p',
    'logprobs',
    'tool_choice',
    'thinking',
    'priority',
  ]),
  '/v2/embed': new Set(['model', 'texts', 'images', 'inputs', 'input_type', 'embedding_types', 'output_dimension', 'max_tokens', 'truncate', 'priority']),
  '/v2/rerank': new Set(['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc', 'priority']),
  '/v1/rerank': new Set(['model', 'query', 'documents', 'top_n', 'return_documents', 'user']),
};
const TOOL_PLAN = 'I will look up the weather.';
const TEMPLATE_TOKENS = 7;

function sendCohereError(res: http.ServerResponse, status: number, message: string, headers?: Record<string, string>): void {
  sendJson(res, status, JSON.stringify({ id: randomUUID(), message }), headers);
}

export function serveCohere(res: http.ServerResponse, call: MockCall): boolean {
  const fields = FIELDS[call.path];
  if (!fields || call.method !== 'POST') return false;
  const bearer = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''));
  const body = call.body;
  if (!bearer) sendCohereError(res, 401, 'no api key supplied');
  else if (call.badJson || typeof body !== 'object' || body === null || Array.isArray(body))
    sendCohereError(res, 400, 'invalid request: the body must be a JSON object');
  else {
    const unknown = Object.keys(body).find((field) => !fields.has(field));
    const problem = unknown
      ? `invalid request: unknown field: parameter '${unknown}' is not a valid field`
      : typeof body.model !== 'string' || !body.model
        ? 'invalid request: model must be a string'
        : invalid(call.path, body);
    if (problem) sendCohereError(res, 400, problem);
    else answer(res, call);
  }
  return true;
}

function invalid(path: string, body: any): string | null {
  if (path === '/v2/embed') {
    if (!Array.isArray(body.texts) || !body.texts.every((text: unknown) => typeof text === 'string'))
      return 'invalid request: texts must be an array of strings';
    if (typeof body.input_type !== 'string') return 'invalid request: input_type is required for embed models v3 and higher.';
    if (!Array.isArray(body.embedding_types) || !body.embedding_types.length)
      return 'invalid request: embedding_types is required for embed models v3 and higher.';
    return null;
  }
  if (path === '/v2/rerank' || path === '/v1/rerank') {
    if (typeof body.query !== 'string' || !body.query) return 'invalid request: query must be a non-empty string';
    const text = (d: any) => (path === '/v1/rerank' && typeof d?.text === 'string' ? d.text : d);
    if (!Array.isArray(body.documents) || !body.documents.length || !body.documents.every((d: unknown) => typeof text(d) === 'string'))
      return 'invalid request: documents must be a non-empty array of strings';
    if (body.top_n !== undefined && !(Number.isInteger(body.top_n) && body.top_n > 0)) return 'invalid request: top_n must be a positive integer';
    return null;
  }
  if (!Array.isArray(body.messages) || !body.messages.length) return 'invalid request: messages must be a non-empty array';
  const calls = new Set<string>();
  for (const [i, message] of body.messages.entries()) {
    if (!['system', 'user', 'assistant', 'tool'].includes(message?.role))
      return `invalid request: messages[${i}].role must be one of system, user, assistant, tool`;
    for (const call of message.tool_calls ?? []) calls.add(call?.id);
    if (message.role === 'tool' && !calls.has(message.tool_call_id)) return `invalid request: messages[${i}].tool_call_id does not answer a tool call`;
  }
  return null;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('') : '';

function answer(res: http.ServerResponse, call: MockCall): void {
  const body = call.body;
  const behaviourModel = body.model.slice(body.model.lastIndexOf('/') + 1);
  const behaviour = behaviourOf(behaviourModel);
  const stream = call.path === '/v2/chat' && body.stream === true;
  const replies = {
    error: (status: number, headers?: Record<string, string>) => sendCohereError(res, status, `Mock error (status ${status})`, headers),
    invalidJson: '{"id": "broken", this is not JSON',
  };
  const flakyKey = () => `cohere\u0000${call.path}\u0000${body.model}\u0000${JSON.stringify(body.messages?.at(-1) ?? body.texts ?? body.query)}`;
  if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;
  const send = (json: unknown) => {
    if (behaviour.delayMs === 0) return sendJson(res, 200, JSON.stringify(json));
    const timer = setTimeout(() => sendJson(res, 200, JSON.stringify(json)), behaviour.delayMs);
    res.once('close', () => clearTimeout(timer));
  };
  const meta = (billed: Record<string, number>) => ({ api_version: { version: '2' }, billed_units: billed });
  if (call.path === '/v2/embed') {
    const dimensions = Number.isInteger(body.output_dimension) ? body.output_dimension : 8;
    const vectors = body.texts.map((text: string) => Array.from({ length: dimensions }, (_, i) => Math.round(Math.sin(text.length + i) * 1000) / 1000));
    const tokens = body.texts.reduce((sum: number, text: string) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);
    return send({
      id: randomUUID(),
      texts: body.texts,
      embeddings: { float: vectors },
      meta: meta({ input_tokens: tokens }),
      response_type: 'embeddings_by_type',
    });
  }
  if (call.path === '/v2/rerank' || call.path === '/v1/rerank') {
    const texts: string[] = body.documents.map((d: any) => (typeof d === 'string' ? d : d.text));
    const words = body.query.toLowerCase().match(/\w+/g) ?? [];
    const results = texts
      .map((document, index) => ({
        index,
        relevance_score: words.length ? words.filter((w: string) => document.toLowerCase().includes(w)).length / words.length : 0,
      }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, body.top_n ?? texts.length);
    if (call.path === '/v2/rerank') return send({ id: randomUUID(), results, meta: meta({ search_units: Math.ceil(texts.length / 100) }) });
    const tokens = Math.ceil((body.query.length + texts.join('').length) / 4);
    return send({
      id: randomUUID(),
      model: body.model,
      usage: { total_tokens: tokens },
      results: results.map((result) => ({ index: result.index, document: { text: texts[result.index] }, relevance_score: result.relevance_score })),
    });
  }
  chat(res, body, behaviour, stream, send);
}

function chat(res: http.ServerResponse, body: any, behaviour: ReturnType<typeof behaviourOf>, stream: boolean, send: (json: unknown) => void): void {
  const messages: any[] = body.messages;
  const lastUser = textOf([...messages].reverse().find((message) => message.role === 'user')?.content);
  const tool =
    Array.isArray(body.tools) && body.tools.length && body.tool_choice !== 'NONE' && /weather/i.test(lastUser) && messages.at(-1).role !== 'tool'
      ? body.tools[0].function.name
      : null;
  let words = splitWords(lastUser.startsWith('echo:') ? lastUser.slice(5).trim() : DEFAULT_REPLY);
  const cut = Number.isInteger(body.max_tokens) && words.length > body.max_tokens;
  if (cut) words = words.slice(0, body.max_tokens);
  const chars = messages.reduce((sum, message) => sum + textOf(message.content).length + JSON.stringify(message.tool_calls ?? '').length - 2, 0);
  const input = Math.max(1, Math.ceil(chars / 4));
  const output = tool ? TOOL_CALL_ARGUMENT_FRAGMENTS.length : words.length;
  const usage = { billed_units: { input_tokens: input, output_tokens: output }, tokens: { input_tokens: input + TEMPLATE_TOKENS, output_tokens: output } };
  const finishReason = tool ? 'TOOL_CALL' : cut ? 'MAX_TOKENS' : 'COMPLETE';
  const id = randomUUID();
  const callId = `${tool}_${id.slice(0, 8)}`;
  const toolCall = { id: callId, type: 'function', function: { name: tool, arguments: TOOL_CALL_ARGUMENT_FRAGMENTS.join('') } };
  if (!stream) {
    const message = tool
      ? { role: 'assistant', tool_plan: TOOL_PLAN, tool_calls: [toolCall] }
      : { role: 'assistant', content: [{ type: 'text', text: words.join('') }] };
    return send({ id, finish_reason: finishReason, message, usage });
  }
  const events: Record<string, unknown>[] = [
    { id, type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } },
  ];
  if (tool) {
    for (const word of splitWords(TOOL_PLAN)) events.push({ type: 'tool-plan-delta', delta: { message: { tool_plan: word } } });
    events.push({
      type: 'tool-call-start',
      index: 0,
      delta: { message: { tool_calls: { id: callId, type: 'function', function: { name: tool, arguments: '' } } } },
    });
    for (const fragment of TOOL_CALL_ARGUMENT_FRAGMENTS)
      events.push({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: fragment } } } } });
    events.push({ type: 'tool-call-end', index: 0 });
  } else {
    events.push({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const word of words) events.push({ type: 'content-delta', index: 0, delta: { message: { content: { text: word } } }, logprobs: null });
    events.push({ type: 'content-end', index: 0 });
  }
  events.push({ type: 'message-end', delta: { finish_reason: finishReason, usage } });
  let frames = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  if (behaviour.streamCut) frames = frames.slice(0, 3);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  streamEvents(res, frames, behaviour, behaviour.streamCut === true);
}
