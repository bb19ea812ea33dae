import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from '../routing/gateway-result';
import { usageFromOpenAI, usageFromOpenAIResponse, usageFromOpenAIResponses } from '../../providers/openai-usage';
import { IgnoredParams } from '../../providers/ignored-params';
import { ProviderRegistry } from '../../providers/registry';
import { ChatUpstream } from '../chat/chat-upstream';
import type { Attempt } from '../../context/attempt';
import { RouteExecutor } from '../routing/route-executor';
import type { RouteTarget } from '../../context/route-plan';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { ModelOperation } from '../model-operation/model-operation';
import { RESPONSES_DIALECT } from './responses-dialect';
import { chatCompletionToResponse, responseSettings } from './chat-bridge/chat-to-response';
import { responsesToChatBody } from './chat-bridge/responses-to-chat';
import { ResponsesStreamEncoder } from './chat-bridge/responses-stream-encoder';
import { ChatToResponsesStreamHandler } from './chat-to-responses-stream-handler';
import type { ResponseCreateDto } from './dto/response-create.dto';
import { ResponsesStreamHandler } from './responses-stream-handler';

export const RESPONSES: OperationSpec & { capability: 'responses' } = {
  capability: 'responses',
  title: 'the Responses API',
  usage: usageFromOpenAIResponses,
  answerUsage: usageFromOpenAIResponse,
};

/** What can be done with a stored response, by method and the path after its id. */
export type ResponseResourceAction = { method: 'GET' | 'POST' | 'DELETE'; id: string; suffix: '' | '/input_items' | '/cancel'; query: string };

/**
 * `responses`: OpenAI's Responses API, forwarded through the routing engine. A provider
 * with the Responses API gets the body as it came (its JSON passed through, its typed
 * event stream relayed event by event); every other provider with chat completions is
 * reached through them, the request and the answer (JSON or stream) translated by
 * `chat-bridge/` (CONTRACT section 12). The stored-response calls (retrieve, delete,
 * input items, cancel) go to the target the routing headers name.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly operation: ModelOperation,
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    private readonly chatUpstream: ChatUpstream,
    private readonly registry: ProviderRegistry,
  ) {}

  create(context: RequestContext, body: ResponseCreateDto): Promise<GatewayResult> {
    return this.operation.run(context, body, RESPONSES_DIALECT, (target, upstreamBody, attempt) =>
      this.bridges(target) ? this.bridged(context, attempt, target, upstreamBody) : this.native(context, attempt, target, upstreamBody),
    );
  }

  /** A provider without the Responses API but with chat completions; one with neither gets the native path's 400. */
  private bridges(target: RouteTarget): boolean {
    const adapter = this.registry.get(target.provider);
    return !adapter.responses && !!adapter.chatCompletions;
  }

  private async native(context: RequestContext, attempt: Attempt, target: RouteTarget, upstreamBody: Record<string, unknown>): Promise<GatewayResult> {
    const answer = await this.attempts.send(context, attempt, target, upstreamBody, RESPONSES);
    return this.attempts.answer(context, attempt, answer, RESPONSES, () => new ResponsesStreamHandler(context));
  }

  /**
   * Through chat completions. Errors come back from `ChatUpstream` in OpenAI's shape,
   * which is this operation's. The delivery-only fields left out are named (header, log).
   */
  private async bridged(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Record<string, unknown>): Promise<GatewayResult> {
    const translated = responsesToChatBody(body, target.provider, new IgnoredParams(target.strictParams));
    attempt.noteIgnoredParams(translated.ignored);
    const model = String(body.model);
    const answer = await this.chatUpstream.open(context, attempt, target, translated.chat);
    if (answer.kind === 'stream') {
      const handler = new ChatToResponsesStreamHandler(
        context,
        answer.decoder,
        new ResponsesStreamEncoder(responseSettings(body), model, translated.namespaced),
      );
      return this.attempts.stream(context, answer.sent, handler);
    }
    const response = chatCompletionToResponse(answer.completion, body, model, translated.namespaced);
    const outcome = { responseBody: response, usage: usageFromOpenAI(answer.completion.usage), servedModel: response.model };
    return { kind: 'json', status: answer.status, body: Buffer.from(JSON.stringify(response)), outcome };
  }

  /** Retrieve, delete, list input items or cancel a stored response; never served from the cache. */
  resource(context: RequestContext, action: ResponseResourceAction): Promise<GatewayResult> {
    const path = `/${encodeURIComponent(action.id)}${action.suffix}`;
    const send = async (target: RouteTarget, _body: Record<string, unknown>, attempt: Attempt): Promise<GatewayResult> => {
      const capability = this.attempts.capability(target, RESPONSES);
      const request = capability.resourceRequest(action.method, path, action.query, target);
      const answer = await this.attempts.sendRequest(context, target, request);
      return this.attempts.readJson(context, attempt, answer, RESPONSES);
    };
    return this.executor.execute(context.begin({}), {}, send, { cacheable: false });
  }
}
