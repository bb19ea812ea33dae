import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../routing/gateway-result';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { ProviderRegistry } from '../../providers/registry';
import { IgnoredParams } from '../../providers/ignored-params';
import { isObject } from '../../providers/translation-checks';
import { ChatUpstream } from '../chat/chat-upstream';
import type { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { ModelOperation } from '../model-operation/model-operation';
import { GEMINI_DIALECT } from './gemini-dialect';
import { GeminiPassthroughStreamHandler } from './gemini-passthrough-stream-handler';
import { usageOfGeminiAnswer } from './gemini-response-assembler';
import { geminiToChatBody } from './chat-bridge/gemini-to-chat';
import { chatCompletionToGemini, openAIErrorToGoogle } from './chat-bridge/chat-to-gemini';
import { ChatToGeminiStreamHandler } from './chat-bridge/gemini-stream-encoder';

const GENERATE: OperationSpec = { capability: 'generateContent', title: "Gemini's generateContent", usage: () => null, answerUsage: usageOfGeminiAnswer };

/** Whether a provider serves a Gemini route natively for this model (Gemini; Vertex AI for its Gemini models). */
export function servesNatively(capability: { servesModel?(model: string): boolean } | undefined, body: Record<string, unknown>): boolean {
  return capability !== undefined && (capability.servesModel?.(String(body.model)) ?? true);
}

/** A provider's error from the chat bridge (OpenAI's shape) in Google's, status and headers kept. */
export function inGoogleShape(error: unknown): unknown {
  if (!(error instanceof UpstreamHttpError)) return error;
  return new UpstreamHttpError(
    error.status,
    Buffer.from(JSON.stringify(openAIErrorToGoogle(error.parsedBody(), error.status))),
    'application/json',
    error.headers,
  );
}

/**
 * `…:generateContent` and `…:streamGenerateContent`: Gemini's API. A provider that speaks it
 * (Gemini, Gemini on Vertex AI) gets the body as it came; every other provider is reached
 * through its chat completions, the request and the answer (JSON or stream) translated by
 * `chat-bridge/`.
 */
@Injectable()
export class GeminiService {
  constructor(
    private readonly operation: ModelOperation,
    private readonly attempts: UpstreamAttempt,
    private readonly chatUpstream: ChatUpstream,
    private readonly registry: ProviderRegistry,
  ) {}

  generate(context: RequestContext, body: Record<string, unknown>): Promise<GatewayResult> {
    return this.operation.run(context, body, GEMINI_DIALECT, (target, upstreamBody, attempt) =>
      servesNatively(this.registry.get(target.provider).generateContent, upstreamBody)
        ? this.native(context, attempt, target, upstreamBody)
        : this.bridged(context, attempt, target, upstreamBody),
    );
  }

  private async native(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Record<string, unknown>): Promise<GatewayResult> {
    const answer = await this.attempts.send(context, attempt, target, body, GENERATE);
    return this.attempts.answer(context, attempt, answer, GENERATE, () => new GeminiPassthroughStreamHandler(context));
  }

  private async bridged(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Record<string, unknown>): Promise<GatewayResult> {
    const model = String(body.model);
    const ignored = new IgnoredParams(target.strictParams);
    const chatBody = geminiToChatBody(body, target.provider, ignored);
    attempt.noteIgnoredParams(ignored.list());
    const answer = await this.chatUpstream.open(context, attempt, target, chatBody).catch((error: unknown) => {
      throw inGoogleShape(error);
    });
    if (answer.kind === 'stream')
      return this.attempts.stream(context, answer.sent, new ChatToGeminiStreamHandler(context, answer.decoder, model, includesThoughts(body)));
    const response = chatCompletionToGemini(answer.completion, model);
    const outcome = {
      responseBody: response,
      usage: usageFromOpenAI(answer.completion.usage),
      servedModel: typeof answer.completion.model === 'string' ? answer.completion.model : null,
    };
    return { kind: 'json', status: answer.status, body: Buffer.from(JSON.stringify(response)), outcome };
  }
}

/** `generationConfig.thinkingConfig.includeThoughts`: the client wants the thought summaries (Gemini sends none unasked). */
function includesThoughts(body: Record<string, unknown>): boolean {
  const config = body.generationConfig ?? body.generation_config;
  const thinking = isObject(config) ? (config.thinkingConfig ?? config.thinking_config) : undefined;
  return isObject(thinking) && (thinking.includeThoughts ?? thinking.include_thoughts) === true;
}
