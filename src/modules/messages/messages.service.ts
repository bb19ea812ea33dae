import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../../context/request-context';
import { UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../routing/gateway-result';
import { usageFromAnthropic } from '../../providers/anthropic/anthropic-usage';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { ProviderRegistry } from '../../providers/registry';
import { ChatUpstream } from '../chat/chat-upstream';
import type { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { AnthropicPassthroughStreamHandler } from './anthropic-passthrough-stream-handler';
import { ChatToMessagesStreamHandler } from './chat-to-messages-stream-handler';
import { chatCompletionToMessage, openAIErrorToAnthropic } from './chat-bridge/chat-to-messages';
import { messagesToChatBody, wantsThinking } from './chat-bridge/messages-to-chat';
import { IgnoredParams } from '../../providers/ignored-params';
import type { MessageCreateDto } from './dto/message-create.dto';
import { ModelOperation } from '../model-operation/model-operation';
import { MESSAGES_DIALECT } from './messages-dialect';

export const MESSAGES: OperationSpec = { capability: 'messages', title: 'the Messages API', usage: usageFromAnthropic };

/**
 * `messages`: Anthropic's Messages API. A provider that speaks it (Anthropic) gets the
 * body as it came, with `vendor-version` / `vendor-beta` as `anthropic-version` /
 * `anthropic-beta`; every other provider is reached through its chat completions,
 * the request and the answer (JSON or stream) translated by `chat-bridge/`.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly operation: ModelOperation,
    private readonly attempts: UpstreamAttempt,
    private readonly chatUpstream: ChatUpstream,
    private readonly registry: ProviderRegistry,
  ) {}

  create(context: RequestContext, body: MessageCreateDto): Promise<GatewayResult> {
    const vendorHeaders = anthropicHeaders(context.requestHeaders);
    return this.operation.run(context, body, MESSAGES_DIALECT, (target, upstreamBody, attempt) =>
      this.speaksMessages(target, upstreamBody)
        ? this.native(context, attempt, target, upstreamBody, vendorHeaders)
        : this.bridged(context, attempt, target, upstreamBody),
    );
  }

  /** Whether the target takes this body natively (Anthropic; Claude on a cloud that also hosts other models). */
  private speaksMessages(target: RouteTarget, body: Record<string, unknown>): boolean {
    const messages = this.registry.get(target.provider).messages;
    return messages !== undefined && (messages.servesModel?.(String(body.model)) ?? true);
  }

  private async native(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<GatewayResult> {
    const capability = this.registry.get(target.provider).messages!;
    let answer;
    try {
      answer = await this.attempts.send(context, attempt, target, body, MESSAGES, headers);
    } catch (error) {
      // A vendor that hosts Claude but answers errors its own way (Bedrock): Anthropic's shape on this route.
      if (!(error instanceof UpstreamHttpError) || !capability.toAnthropicError) throw error;
      const anthropicError = capability.toAnthropicError(error.status, error.parsedBody(), error.headers);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(anthropicError)), 'application/json', error.headers);
    }
    return this.attempts.answer(
      context,
      attempt,
      answer,
      MESSAGES,
      () => new AnthropicPassthroughStreamHandler(context, capability.streamEvent?.bind(capability)),
    );
  }

  private async bridged(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Record<string, unknown>): Promise<GatewayResult> {
    const model = String(body.model);
    const ignored = new IgnoredParams(target.strictParams);
    const chatBody = messagesToChatBody(body, target.provider, ignored);
    attempt.noteIgnoredParams(ignored.list());
    const thinking = wantsThinking(body);
    let answer;
    try {
      answer = await this.chatUpstream.open(context, attempt, target, chatBody);
    } catch (error) {
      if (!(error instanceof UpstreamHttpError)) throw error;
      const anthropicError = openAIErrorToAnthropic(error.parsedBody(), error.status);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(anthropicError)), 'application/json', error.headers);
    }
    if (answer.kind === 'stream') return this.attempts.stream(context, answer.sent, new ChatToMessagesStreamHandler(context, answer.decoder, model, thinking));
    const message = chatCompletionToMessage(answer.completion, model, thinking);
    const outcome = {
      responseBody: message,
      usage: usageFromOpenAI(answer.completion.usage),
      servedModel: typeof answer.completion.model === 'string' ? answer.completion.model : null,
    };
    return { kind: 'json', status: answer.status, body: Buffer.from(JSON.stringify(message)), outcome };
  }
}

/**
 * CONTRACT section 7: `vendor-version` / `vendor-beta` become `anthropic-version` /
 * `anthropic-beta`; a client's own `anthropic-*` headers pass too, the `vendor-*` ones
 * win. The adapter defaults the version. Nothing else of the client's is forwarded.
 */
export function anthropicHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const first = (name: string) => {
    const value = headers[name];
    return (Array.isArray(value) ? value.join(',') : value) || undefined;
  };
  const out: Record<string, string> = {};
  const version = first('vendor-version') ?? first('anthropic-version');
  if (version) out['anthropic-version'] = version;
  const beta = first('vendor-beta') ?? first('anthropic-beta');
  if (beta) out['anthropic-beta'] = beta;
  return out;
}
