import type { GatewayError, LoggedError } from '../../common/errors/gateway-error';
import type { ErrorShape } from '../../common/errors/error-shape';
import { isObject } from '../../common/config-fields';
import type { OperationTexts, TextSlot } from '../guardrails/operation-texts';
import { slot } from '../guardrails/operation-texts';
import { list, records, text, type Body, type ToolDialect } from '../mcp/tool-dialects';
import type { ModelDialect } from '../model-operation/model-operation';

/**
 * Google's Gemini API (`/v1beta/models/{model}:generateContent`, CONTRACT section 16) as a
 * dialect: where its texts are, how it offers and calls tools, its error shape and its
 * stream frames. The gateway's body of a Gemini request is the client's with `model` (from
 * the path) and `stream` (`:streamGenerateContent`) added; the native attempt takes them
 * out again (geminiNativeBody). The attempts are GeminiService's.
 */

/** The routes of the dialect: every error on them is Google's. */
export const GEMINI_ROUTE_PREFIX = '/v1beta/';

/** Google's canonical status names (google.rpc.Code) by HTTP status, as its APIs answer them. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleStatusName(code: number): string {
  return STATUS_NAMES[code] ?? (code >= 500 ? 'INTERNAL' : code >= 400 ? 'FAILED_PRECONDITION' : 'UNKNOWN');
}

/**
 * A Google error body: `{"error": {code, message, status}}`; the gateway's error code (and
 * the field at fault) go in an ErrorInfo detail, where Google's APIs put a reason.
 */
export function googleError(code: number, message: string, reason?: { code: string | null; param?: string | null }, extra: Body = {}): Body {
  const details = reason?.code
    ? [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: reason.code,
          domain: 'ai-gateway',
          ...(reason.param ? { metadata: { param: reason.param } } : {}),
        },
      ]
    : undefined;
  return { error: { code, message, status: googleStatusName(code), ...(details ? { details } : {}), ...extra } };
}

/** Google's error shape on `/v1beta/…`; the gateway's own extra fields (a guardrail's results, a budget's figures) kept. */
export const GOOGLE_ERROR_SHAPE: ErrorShape = {
  matches: (path) => path.startsWith(GEMINI_ROUTE_PREFIX),
  body: (error) => googleError(error.status, error.message, { code: error.code, param: error.param }, error.details),
};

/** One SSE event as Google writes it: data only, CRLF line ends. */
export const geminiFrame = (chunk: unknown): string => `data: ${JSON.stringify(chunk)}\r\n\r\n`;

/** HTTP statuses of the errors that end a stream after it started (LoggedError carries none). */
const STREAM_ERROR_CODES: Record<string, number> = { timeout_error: 504, upstream_error: 502, service_unavailable: 503, rate_limit_error: 429 };

/** The event that ends a Gemini stream with an error: Google's error body as a data event. */
export function geminiErrorFrame(error: LoggedError): string {
  return geminiFrame(googleError(STREAM_ERROR_CODES[error.type] ?? 500, error.message, { code: error.code }));
}

/** The text parts of a Content (`{parts: [{text}]}`); a thought summary is not the answer's text. */
function partSlots(content: unknown, withThoughts: boolean): TextSlot[] {
  if (!isObject(content)) return [];
  return records(content.parts).flatMap((part) => (withThoughts || part.thought !== true ? slot(part, 'text') : []));
}

/** Gemini: the system instruction's and every content's text parts; the answer's first candidate's text parts. */
export const GEMINI_TEXTS: OperationTexts = {
  request: (body) => [...partSlots(body.systemInstruction, true), ...records(body.contents).flatMap((content) => partSlots(content, true))],
  answer: (answer) => (isObject(answer) ? records(answer.candidates).flatMap((candidate) => partSlots(candidate.content, false)) : []),
  // Gemini marks no end of stream; its last chunk is the one that carries the finish reason.
  isFinalFrame: (frame) => frame.includes('"finishReason"'),
  streamError: (error: GatewayError) => geminiFrame(googleError(error.status, error.message, { code: error.code, param: error.param })),
};

/** The function calls of an answer's first candidate, each with its part. */
function callParts(answer: unknown): Body[] {
  if (!isObject(answer)) return [];
  const candidate = records(answer.candidates)[0];
  return isObject(candidate?.content) ? records(candidate.content.parts).filter((part) => isObject(part.functionCall)) : [];
}

/** Gemini gives a call no id unless asked to: the call's position stands in for it. */
const callId = (call: Body, index: number): string => text(call.id) || `gemini-call-${index}`;

/**
 * `POST …:generateContent`: `tools[].functionDeclarations` (parameters as JSON Schema in
 * `parametersJsonSchema`), `functionCall` parts in the model's content, `functionResponse`
 * parts in a user turn.
 */
export const GEMINI_TOOLS: ToolDialect = {
  clientToolNames: (body) => records(body.tools).flatMap((tool) => records(tool.functionDeclarations).map((declaration) => text(declaration.name))),
  withTools: (body, tools) => ({
    ...body,
    tools: [
      ...list(body.tools),
      {
        functionDeclarations: tools.map((tool) => ({ name: tool.name, description: tool.description ?? '', parametersJsonSchema: tool.inputSchema })),
      },
    ],
  }),
  toolCalls: (answer) =>
    callParts(answer).map((part, index) => {
      const call = part.functionCall as Body;
      return { id: callId(call, index), name: text(call.name), arguments: isObject(call.args) ? call.args : {} };
    }),
  continued: (body, answer, results) => {
    const candidate = records((answer as Body).candidates)[0];
    const turn = { role: 'model', parts: isObject(candidate?.content) ? list(candidate.content.parts) : [] };
    const replies = results.map((result) => ({
      functionResponse: {
        name: result.call.name,
        ...(result.call.id.startsWith('gemini-call-') ? {} : { id: result.call.id }),
        response: result.isError ? { error: result.text } : { output: result.text },
      },
    }));
    return { ...body, contents: [...list(body.contents), turn, { role: 'user', parts: replies }] };
  },
  withoutCalls: (answer, ids) => {
    const response = answer as Body;
    return {
      ...response,
      candidates: records(response.candidates).map((candidate, position) => {
        if (position > 0 || !isObject(candidate.content)) return candidate;
        let index = 0;
        const parts = records(candidate.content.parts).filter((part) => !isObject(part.functionCall) || !ids.has(callId(part.functionCall, index++)));
        return { ...candidate, content: { ...candidate.content, parts } };
      }),
    };
  },
  // A whole GenerateContentResponse is a valid chunk: one event.
  frames: (answer) => [geminiFrame(answer)],
};

export const GEMINI_DIALECT: ModelDialect = {
  texts: GEMINI_TEXTS,
  tools: GEMINI_TOOLS,
  errors: GOOGLE_ERROR_SHAPE,
  // Gemini's body names no end user (the log's comes from x-gateway-metadata's _user).
  opening: (body) => ({ stream: body.stream === true, user: null }),
};
