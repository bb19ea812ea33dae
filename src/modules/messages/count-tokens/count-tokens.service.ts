import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../../context/request-context';
import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-error';
import type { GatewayResult } from '../../routing/gateway-result';
import type { ChatInputTokensCapability, MessagesCountTokensCapability, ProviderAdapter } from '../../../providers/provider-adapter';
import { ProviderRegistry } from '../../../providers/registry';
import { RouteExecutor } from '../../routing/route-executor';
import type { Attempt } from '../../../context/attempt';
import type { RouteTarget } from '../../../context/route-plan';
import { OperationSpec, UpstreamAttempt } from '../../upstream/upstream-attempt';
import { openAIErrorToAnthropic } from '../chat-bridge/chat-to-messages';
import { messagesToChatBody } from '../chat-bridge/messages-to-chat';
import type { MessageCountTokensDto } from '../dto/message-count-tokens.dto';
import { anthropicHeaders } from '../messages.service';
import { estimateInputTokens } from './token-estimator';

/** Anthropic documents token counting as free (limited in requests per minute only): the row's cost is 0, not unknown. */
const ANTHROPIC_COUNT: OperationSpec = { capability: 'messagesCountTokens', title: 'token counting', usage: () => null, cost: () => 0 };

/** The fields of a Messages body that make its input tokens; the rest tunes generation and counts nothing. */
const COUNTED_FIELDS = ['model', 'system', 'messages', 'tools', 'tool_choice'] as const;

/**
 * `POST /v1/messages/count_tokens`, answered `{input_tokens}` in Anthropic's shape:
 *   - a provider that speaks the Messages API (Anthropic) counts it natively: the body
 *     passes through with the client's `anthropic-*` / `vendor-*` headers; so does a cloud
 *     for the Claude models it hosts (Bedrock's CountTokens, Vertex AI's count-tokens),
 *     its answer and errors put in Anthropic's shape (a model its counter refuses to
 *     count is estimated instead);
 *   - a provider with a counter of its own (Gemini's countTokens) counts the body as its
 *     chat would send it (Messages → chat bridge → the vendor's request);
 *   - any other provider, or a body the bridge cannot carry, gets a tokenizer estimate
 *     marked `"estimated": true` (token-estimator.ts) and nothing is sent.
 * Routed like `/v1/messages`; `override_params` are not applied (they tune generation,
 * which the count does not depend on and Anthropic's counter refuses). Never cached,
 * nothing reserved on budgets, no usage logged (nothing was consumed).
 */
@Injectable()
export class CountTokensService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    private readonly registry: ProviderRegistry,
  ) {}

  count(context: RequestContext, body: MessageCountTokensDto): Promise<GatewayResult> {
    const vendorHeaders = anthropicHeaders(context.requestHeaders);
    return this.executor.execute(
      context.begin({ body }),
      body,
      (target, upstreamBody, attempt) => {
        const model = String(upstreamBody.model);
        if (target.allowedModels && !target.allowedModels.includes(model)) {
          throw GatewayError.permission(`Model '${model}' is not allowed for this virtual key`, 'model_not_allowed');
        }
        const countBody = { ...(body as Record<string, unknown>), model };
        const adapter = this.registry.get(target.provider);
        const counter = adapter.messagesCountTokens;
        if (counter && (counter.servesModel?.(model) ?? true)) return this.native(context, attempt, target, counter, countBody, vendorHeaders);
        if (adapter.chatInputTokens) return this.vendorCounted(context, target, adapter, adapter.chatInputTokens, countBody);
        return Promise.resolve(estimated(countBody));
      },
      { cacheable: false, budgeted: false },
    );
  }

  private async native(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    counter: MessagesCountTokensCapability,
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<GatewayResult> {
    let sent;
    try {
      sent = await this.attempts.send(context, attempt, target, body, ANTHROPIC_COUNT, headers);
    } catch (error) {
      if (!(error instanceof UpstreamHttpError)) throw error;
      // A Claude model the cloud's counter does not cover (Bedrock's CRIS-only models): estimated, as before the counter.
      if (counter.cannotCount?.(error.status, error.parsedBody())) return estimated(body);
      // A cloud that counts Claude's tokens but answers errors its own way (Bedrock): Anthropic's shape on this route.
      if (!counter.toAnthropicError) throw error;
      const anthropicError = counter.toAnthropicError(error.status, error.parsedBody(), error.headers);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(anthropicError)), 'application/json', error.headers);
    }
    const inputTokens = counter.inputTokens;
    if (!inputTokens) return this.attempts.readJson(context, attempt, sent, ANTHROPIC_COUNT);
    return this.attempts.readJson(context, attempt, sent, ANTHROPIC_COUNT, (json) => {
      const count = inputTokens(json);
      if (count === null) throw GatewayError.upstreamMalformed(`Provider ${target.provider} answered its token count without a number of tokens`);
      return { input_tokens: count };
    });
  }

  /** Counted by the vendor from the request its chat would send; estimated when the bridge cannot carry the body. */
  private async vendorCounted(
    context: RequestContext,
    target: RouteTarget,
    adapter: ProviderAdapter,
    capability: ChatInputTokensCapability,
    body: Record<string, unknown>,
  ): Promise<GatewayResult> {
    let request;
    try {
      const countable = Object.fromEntries(COUNTED_FIELDS.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]));
      // The bridge checks what it reads (a 400 naming the field), as for /v1/messages.
      request = capability.buildRequest(messagesToChatBody(countable, target.provider), target);
    } catch (error) {
      // What the vendor cannot be asked (a document, a server tool …) can still be estimated.
      if (error instanceof GatewayError && error.status === 400) return estimated(body);
      throw error;
    }
    let sent;
    try {
      sent = await this.attempts.sendRequest(context, target, request);
    } catch (error) {
      const translation = adapter.chatCompletions?.translation;
      if (!(error instanceof UpstreamHttpError) || !translation) throw error;
      const anthropicError = openAIErrorToAnthropic(translation.toOpenAIError(error.status, error.parsedBody()), error.status);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(anthropicError)), 'application/json', error.headers);
    }
    const { json } = await this.attempts.readJsonObject(context, sent);
    const inputTokens = capability.inputTokens(json);
    if (inputTokens === null) throw GatewayError.upstreamMalformed(`Provider ${target.provider} answered its token count without a number of tokens`);
    return counted({ input_tokens: inputTokens });
  }
}

/** Nothing is sent, so nothing can be charged: the cost is 0. */
function estimated(body: Record<string, unknown>): GatewayResult {
  return counted({ input_tokens: estimateInputTokens(body), estimated: true }, 0);
}

function counted(answer: { input_tokens: number; estimated?: true }, costUsd: number | null = null): GatewayResult {
  return { kind: 'json', status: 200, body: Buffer.from(JSON.stringify(answer)), outcome: { responseBody: answer, usage: null, servedModel: null, costUsd } };
}
