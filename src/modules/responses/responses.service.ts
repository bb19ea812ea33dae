import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../common/context/request-context';
import type { GatewayResult } from '../../common/http/gateway-result';
import { usageFromOpenAIResponses } from '../../providers/openai-usage';
import { RouteExecutor } from '../routing/route-executor.service';
import type { RouteTarget } from '../routing/route-plan';
import { relayUpstreamSse } from '../upstream/sse-relay';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { RESPONSES_TEXTS } from '../guardrails/operation-texts';
import type { ResponseCreateDto } from './dto/response-create.dto';
import { ResponsesStreamHandler } from './responses-stream-handler';

const RESPONSES: OperationSpec & { capability: 'responses' } = { capability: 'responses', title: 'the Responses API', usage: usageFromOpenAIResponses };

/** What can be done with a stored response, by method and the path after its id. */
export type ResponseResourceAction = { method: 'GET' | 'POST' | 'DELETE'; id: string; suffix: '' | '/input_items' | '/cancel'; query: string };

/**
 * `responses`: OpenAI's Responses API, forwarded through the routing engine. Creation
 * passes the provider's JSON through, or relays its typed event stream event by event;
 * the stored-response calls (retrieve, delete, input items, cancel) go to the target
 * the routing headers name.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  create(context: RequestContext, body: ResponseCreateDto): Promise<GatewayResult> {
    context.isStream = body.stream === true;
    context.requestBody = body;
    context.user = body.user ?? context.user;
    return this.executor.execute(context, body as unknown as Record<string, unknown>, (target, upstreamBody) => this.attempt(context, target, upstreamBody), { texts: RESPONSES_TEXTS });
  }

  private async attempt(context: RequestContext, target: RouteTarget, upstreamBody: Record<string, unknown>): Promise<GatewayResult> {
    const answer = await this.attempts.send(context, target, upstreamBody, RESPONSES);
    const contentType = String(answer.response.headers['content-type'] ?? '');
    if (context.isStream && contentType.includes('text/event-stream')) {
      const frames = await relayUpstreamSse(answer.response, context, answer.timeoutMs, new ResponsesStreamHandler(context));
      return { kind: 'sse', status: answer.response.status, frames };
    }
    return this.attempts.readJson(context, answer, RESPONSES);
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
