import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { UpstreamHttpError } from '../../common/errors/gateway-error';
import type { ChatCompletion, ChatCompletionBody, ChatStreamDecoder } from '../../providers/chat-format';
import { usageFromOpenAI } from '../../providers/openai-usage';
import type { ChatCompletionsCapability } from '../../providers/provider-adapter';
import type { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { isEventStream } from '../upstream/aws-event-stream';
import { OperationSpec, SentAttempt, UpstreamAttempt } from '../upstream/upstream-attempt';
import { OpenAIChatStreamDecoder } from '../../providers/openai/chat-stream-decoder';

export const CHAT_COMPLETIONS: OperationSpec & { capability: 'chatCompletions' } = {
  capability: 'chatCompletions',
  title: 'chat completions',
  usage: usageFromOpenAI,
};

/** A chat answer as OpenAI objects, whatever the provider's wire format. */
export type ChatAnswer =
  { kind: 'json'; status: number; completion: ChatCompletion } | { kind: 'stream'; status: number; sent: SentAttempt; decoder: ChatStreamDecoder };

/**
 * Chat completions with any provider, answered as OpenAI objects: the translated path
 * of `/v1/chat/completions` (Anthropic, Gemini) and the way `/v1/messages` reaches
 * providers that do not speak Anthropic's API. Errors come back in OpenAI's shape.
 * (`/v1/chat/completions` to an OpenAI-format provider skips this and passes bytes through.)
 */
@Injectable()
export class ChatUpstream {
  constructor(private readonly attempts: UpstreamAttempt) {}

  capability(target: RouteTarget): ChatCompletionsCapability {
    return this.attempts.capability(target, CHAT_COMPLETIONS);
  }

  /** One attempt; streams always ask for usage (a translated vendor sends it anyway). */
  async open(context: RequestContext, attempt: Attempt, target: RouteTarget, body: ChatCompletionBody): Promise<ChatAnswer> {
    const capability = this.capability(target);
    const translation = capability.translation;
    const stream = body.stream === true;
    const sent = stream && !translation ? { ...body, stream_options: { ...body.stream_options, include_usage: true } } : body;
    const model = String(body.model);

    let answer: SentAttempt;
    try {
      answer = await this.attempts.send(context, attempt, target, sent, CHAT_COMPLETIONS);
    } catch (error) {
      if (!(error instanceof UpstreamHttpError) || !translation) throw error;
      const openAIError = translation.toOpenAIError(error.status, error.parsedBody(), error.headers);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(openAIError)), 'application/json', error.headers);
    }

    const contentType = String(answer.response.headers['content-type'] ?? '');
    if (stream && isEventStream(contentType)) {
      const decoder = translation ? translation.streamDecoder(model) : new OpenAIChatStreamDecoder();
      return { kind: 'stream', status: answer.response.status, sent: answer, decoder };
    }
    const { json } = await this.attempts.readJsonObject(context, answer);
    const completion = translation ? translation.toChatCompletion(json, model) : (json as ChatCompletion);
    return { kind: 'json', status: answer.response.status, completion };
  }
}
