import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../gateway/request-context';
import type { GatewayResult } from '../../common/http/gateway-result';
import { usageFromOpenAI, usageFromOpenAIResponse, usageFromOpenAIResponses } from '../../providers/openai-usage';
import { IgnoredParams } from '../../providers/ignored-params';
import { ProviderRegistry } from '../../providers/registry';
import { ChatUpstream } from '../chat/chat-upstream.service';
import { RouteExecutor } from '../routing/route-executor.service';
import type { RouteTarget } from '../routing/route-plan';
import { relayUpstreamSse } from '../upstream/sse-relay';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { RESPONSES_TEXTS } from '../guardrails/operation-texts';
import { chatCompletionToResponse, responseSettings } from './chat-bridge/chat-to-response';
import { responsesToChatBody } from './chat-bridge/responses-to-chat';
import { ResponsesStreamEncoder } from './chat-bridge/responses-stream-encoder';
import { ChatToResponsesStreamHandler } from './chat-to-responses-stream-handler';
import type { ResponseCreateDto } from './dto/response-create.dto';
import { ResponsesStreamHandler } from './responses-stream-handler';

const RESPONSES: OperationSpec & { capability: 'responses' } = { capability: 'responses', title: 'the Responses API', usage: usageFromOpenAIResponses, answerUsage: usageFromOpenAIResponse };

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
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    private readonly chatUpstream: ChatUpstream,
    private readonly registry: ProviderRegistry,
  ) {}

  create(context: RequestContext, body: ResponseCreateDto): Promise<GatewayResult> {
    context.isStream = body.stream === true;
    context.requestBody = body;
    context.user = body.user ?? context.user;
    return this.executor.execute(
      context,
      body as unknown as Record<string, unknown>,
      (target, upstreamBody) => (this.bridges(target) ? this.bridged(context, target, upstreamBody) : this.native(context, target, upstreamBody)),
      { texts: RESPONSES_TEXTS },
    );
  }

  /** A provider without the Responses API but with chat completions; one with neither gets the native path's 400. */
  private bridges(target: RouteTarget): boolean {
    const adapter = this.registry.get(target.provider);
    return !adapter.responses && !!adapter.chatCompletions;
  }

  private async native(context: RequestContext, target: RouteTarget, upstreamBody: Record<string, unknown>): Promise<GatewayResult> {
    const answer = await this.attempts.send(context, target, upstreamBody, RESPONSES);
    const contentType = String(answer.response.headers['content-type'] ?? '');
    if (context.isStream && contentType.includes('text/event-stream')) {
      const frames = await relayUpstreamSse(answer.response, context, answer.timeoutMs, new ResponsesStreamHandler(context));
      return { kind: 'sse', status: answer.response.status, frames };
    }
    return this.attempts.readJson(context, answer, RESPONSES);
  }

  /**
   * Through chat completions. Errors come back from `ChatUpstream` in OpenAI's shape,
   * which is this operation's. The delivery-only fields left out are named (header, log).
   */
  private async bridged(context: RequestContext, target: RouteTarget, body: Record<string, unknown>): Promise<GatewayResult> {
    const translated = responsesToChatBody(body, target.provider, new IgnoredParams(target.strictParams));
    context.noteIgnoredParams(translated.ignored);
    const model = String(body.model);
    const answer = await this.chatUpstream.open(context, target, translated.chat);
    if (answer.kind === 'stream') {
      const handler = new ChatToResponsesStreamHandler(context, answer.decoder, new ResponsesStreamEncoder(responseSettings(body), model, translated.namespaced));
      const frames = await relayUpstreamSse(answer.sent.response, context, answer.sent.timeoutMs, handler);
      return { kind: 'sse', status: answer.status, frames };
    }
    const response = chatCompletionToResponse(answer.completion, body, model, translated.namespaced);
    context.responseBody = response;
    context.usage = usageFromOpenAI(answer.completion.usage);
    context.servedModel = response.model;
    return { kind: 'json', status: answer.status, body: Buffer.from(JSON.stringify(response)) };
  }

  /** Retrieve, delete, list input items or cancel a stored response; never served from the cache. */
  resource(context: RequestContext, action: ResponseResourceAction): Promise<GatewayResult> {
    const path = `/${encodeURIComponent(action.id)}${action.suffix}`;
    const send = async (target: RouteTarget): Promise<GatewayResult> => {
      const capability = this.attempts.capability(target, RESPONSES);
      const request = capability.resourceRequest(action.method, path, action.query, target);
      const answer = await this.attempts.sendRequest(context, target, request);
      return this.attempts.readJson(context, answer, RESPONSES);
    };
    return this.executor.execute(context, {}, send, { cacheable: false });
  }
}
