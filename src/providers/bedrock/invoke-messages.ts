import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import { anthropicErrorType } from '../../common/errors/anthropic-error';
import type { MessagesCapability, MessagesCountTokensCapability, UpstreamRequest } from '../provider-adapter';
import { parseStreamEvent } from '../stream-event';
import { toOpenAIError } from './converse-response';
import { converseStreamError } from './converse-stream';
import { AWS_EVENT_STREAM_TYPE, modelUrl } from './bedrock-urls';
import { withAutoBreakpoints } from '../prompt-cache';

/**
 * Claude on Bedrock speaks Anthropic's Messages API through InvokeModel
 * (`POST /model/{id}/invoke`) and InvokeModelWithResponseStream
 * (`/invoke-with-response-stream`): the body is the Messages body without `model` (in the
 * URL) and `stream` (in the method), with `anthropic_version: "bedrock-2023-05-31"`; betas
 * go in the body as `anthropic_beta: [...]`, not as a header. The JSON answer is Anthropic's
 * message; the stream is AWS's binary event stream whose `chunk` events carry
 * `{"bytes": "<base64 of one Anthropic stream event>"}`.
 */

/** The API version Bedrock's Claude models take, in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * Claude model ids on Bedrock: `anthropic.claude-…`, also behind a cross-region inference
 * profile (`us.`, `eu.`, `apac.`, `global.`, … prefixes).
 */
export function isBedrockClaude(model: string): boolean {
  return /^([a-z]{2,6}(-[a-z]+)?\.)?anthropic\.claude/.test(model);
}

/** The InvokeModel body of a Messages body (model and stream left out, version and betas added) and the model it names. */
function invokePayload(
  body: Record<string, unknown>,
  target: ProviderTarget,
  clientHeaders: Record<string, string>,
): { model: string; stream: unknown; payload: Record<string, unknown> } {
  const { model, stream, ...rest } = body;
  if (typeof model !== 'string' || !model) throw GatewayError.invalidRequest('model must be a string naming a Bedrock model id or inference profile', 'model');
  const beta = clientHeaders['anthropic-beta'] || target.providerOptions.anthropic_beta;
  const betas = beta
    ? beta
        .split(',')
        .map((value) => value.trim())
        .filter(Boolean)
    : [];
  const payload: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  if (betas.length) payload.anthropic_beta = betas;
  return { model, stream, payload };
}

/** The cross-region inference profile prefix of a Claude model id (`us.`, `global.` …). */
const PROFILE_PREFIX = /^[a-z]{2,6}(-[a-z]+)?\.(?=anthropic\.claude)/;

function invokeRequest(body: Record<string, unknown>, target: ProviderTarget, clientHeaders: Record<string, string> = {}): UpstreamRequest {
  const { model, stream, payload } = invokePayload(target.autoCacheBreakpoints ? withAutoBreakpoints(body) : body, target, clientHeaders);
  const streamed = stream === true;
  return {
    method: 'POST',
    url: modelUrl(target, model, streamed ? 'invoke-with-response-stream' : 'invoke'),
    headers: { 'content-type': 'application/json', accept: streamed ? AWS_EVENT_STREAM_TYPE : 'application/json' },
    body: JSON.stringify(payload),
  };
}

/**
 * Bedrock's CountTokens (`POST /model/{id}/count-tokens`) for a count_tokens body:
 * `{"input": {"invokeModel": {"body": "<base64 of the InvokeModel body>"}}}`, answered
 * `{"inputTokens": N}`. A Claude model CountTokens does not cover (AWS: some are only served
 * through cross-region inference) is refused with a 400 ValidationException; that one is
 * estimated by the gateway. The InvokeModel body needs `max_tokens`, which a count_tokens body
 * has not and which counts no input token: 1, or just above a thinking budget (which
 * must stay below it).
 */
function countTokensRequest(body: Record<string, unknown>, target: ProviderTarget, clientHeaders: Record<string, string> = {}): UpstreamRequest {
  const { model: invoked, payload } = invokePayload(body, target, clientHeaders);
  // CountTokens takes foundation model ids only and refuses inference profiles; the profile's model has the same tokenizer.
  const model = invoked.replace(PROFILE_PREFIX, '');
  const thinking = payload.thinking as { budget_tokens?: unknown } | undefined;
  const budget = typeof thinking?.budget_tokens === 'number' && Number.isFinite(thinking.budget_tokens) ? thinking.budget_tokens : 0;
  const invokeBody = { ...payload, max_tokens: Math.max(1, Math.floor(budget) + 1) };
  return {
    method: 'POST',
    url: modelUrl(target, model, 'count-tokens'),
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ input: { invokeModel: { body: Buffer.from(JSON.stringify(invokeBody)).toString('base64') } } }),
  };
}

/**
 * One frame of InvokeModelWithResponseStream as the Anthropic SSE event it carries; an
 * exception frame (a throttle, a model error mid-stream) throws, so the stream ends with an
 * Anthropic error event. Other event types (none today) are dropped.
 */
function unwrapChunk(event: EventSourceMessage): EventSourceMessage | null {
  const type = event.event ?? '';
  if (type.startsWith('exception:') || type.startsWith('error:')) throw converseStreamError(type, event.data);
  if (type !== 'chunk') return null;
  const payload = parseStreamEvent(event.data, 'bedrock');
  if (typeof payload.bytes !== 'string') throw GatewayError.upstreamMalformed('Provider bedrock sent a chunk event without bytes');
  const data = Buffer.from(payload.bytes, 'base64').toString('utf8');
  const inner = parseStreamEvent(data, 'bedrock');
  return { event: typeof inner.type === 'string' ? inner.type : undefined, data, id: undefined };
}

/** An AWS error answer (`{"message": …}`, its name in `x-amzn-errortype`) in Anthropic's error shape, worded as for chat. */
function toAnthropicError(status: number, body: unknown, headers?: Record<string, string>): Record<string, unknown> {
  const { error } = toOpenAIError(status, body, headers);
  return { type: 'error', error: { type: anthropicErrorType(error.type, status), message: error.message } };
}

export const bedrockMessages: MessagesCapability = {
  servesModel: isBedrockClaude,
  buildRequest: invokeRequest,
  streamEvent: unwrapChunk,
  toAnthropicError,
};

/** Claude's token counts through CountTokens; other models (Converse only) keep the gateway's estimate. */
export const bedrockCountTokens: MessagesCountTokensCapability = {
  servesModel: isBedrockClaude,
  buildRequest: countTokensRequest,
  inputTokens: (answer) =>
    typeof answer.inputTokens === 'number' && Number.isInteger(answer.inputTokens) && answer.inputTokens >= 0 ? answer.inputTokens : null,
  toAnthropicError,
  cannotCount: (status, body) => status === 400 && /doesn.t support counting tokens/i.test(String((body as { message?: unknown } | null)?.message ?? '')),
};
