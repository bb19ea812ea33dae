import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../routing/gateway-result';
import { wantsAnthropicModels } from '../../common/http/anthropic-shape';
import type { ResourceCapability } from '../../providers/provider-adapter';
import { ProviderRegistry } from '../../providers/registry';
import { openAIErrorToAnthropic } from '../messages/chat-bridge/chat-to-messages';
import { RouteExecutor } from '../routing/route-executor';
import type { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { UpstreamAttempt } from '../upstream/upstream-attempt';
import { toAnthropicModel, toAnthropicPage, toOpenAIList, toOpenAIModel } from './model-list-shapes';

const MODELS = { capability: 'models' as const, title: 'a model list', usage: () => null };
/** Anthropic's list is paged (20 by default); OpenAI's shape has no pages, so all of it, at Anthropic's largest page. */
const WHOLE_ANTHROPIC_LIST = 'limit=1000';

/**
 * `GET /v1/models` and `/v1/models/{id}` of the provider the routing headers name, in
 * the shape the client speaks: Anthropic's when the request carries `anthropic-version`
 * or `vendor-version` (CONTRACT section 12), else OpenAI's. A provider that serves the
 * wanted shape is passed through (its query too: `limit`, `before_id`, `after_id` at
 * Anthropic); otherwise its list in the other shape is converted (model-list-shapes.ts),
 * and an OpenAI list is paged here by Anthropic's query. Never cached; free, so nothing
 * is reserved on budgets.
 */
@Injectable()
export class ModelListService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    private readonly registry: ProviderRegistry,
  ) {}

  /** `id` undefined: the list; else that model (already URL-decoded). */
  run(context: RequestContext, query: string, id?: string): Promise<GatewayResult> {
    const anthropicShape = wantsAnthropicModels(context.requestHeaders);
    const path = id === undefined ? '' : `/${encodeURIComponent(id)}`;
    return this.executor.execute(
      context.begin({}),
      {},
      (target, _body, attempt) =>
        anthropicShape ? this.anthropicShaped(context, attempt, target, path, query, id) : this.openAIShaped(context, attempt, target, path, query, id),
      { cacheable: false, budgeted: false },
    );
  }

  private async openAIShaped(context: RequestContext, attempt: Attempt, target: RouteTarget, path: string, query: string, id?: string): Promise<GatewayResult> {
    const adapter = this.registry.get(target.provider);
    if (adapter.models || !adapter.anthropicModels) return this.passThrough(context, attempt, target, this.attempts.capability(target, MODELS), path, query);
    const json = await this.fetch(context, target, adapter.anthropicModels, path, id === undefined ? WHOLE_ANTHROPIC_LIST : '');
    return answered(id === undefined ? toOpenAIList(json, target.provider) : toOpenAIModel(json, target.provider));
  }

  private async anthropicShaped(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    path: string,
    query: string,
    id?: string,
  ): Promise<GatewayResult> {
    const adapter = this.registry.get(target.provider);
    if (adapter.anthropicModels) return this.passThrough(context, attempt, target, adapter.anthropicModels, path, query);
    const capability = this.attempts.capability(target, MODELS);
    let json;
    try {
      json = await this.fetch(context, target, capability, path, '');
    } catch (error) {
      // The client reads Anthropic's errors here: the provider's error keeps its status, in that shape.
      if (!(error instanceof UpstreamHttpError)) throw error;
      const anthropicError = openAIErrorToAnthropic(error.parsedBody(), error.status);
      throw new UpstreamHttpError(error.status, Buffer.from(JSON.stringify(anthropicError)), 'application/json', error.headers);
    }
    return answered(id === undefined ? toAnthropicPage(json, new URLSearchParams(query)) : toAnthropicModel(json));
  }

  private async passThrough(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    capability: ResourceCapability,
    path: string,
    query: string,
  ): Promise<GatewayResult> {
    const answer = await this.attempts.sendRequest(context, target, capability.request('GET', path, query, target));
    return this.attempts.readJson(context, attempt, answer, MODELS);
  }

  private async fetch(context: RequestContext, target: RouteTarget, capability: ResourceCapability, path: string, query: string): Promise<Record<string, any>> {
    const answer = await this.attempts.sendRequest(context, target, capability.request('GET', path, query, target));
    return (await this.attempts.readJsonObject(context, answer)).json;
  }
}

/** A list or model the gateway reshaped, logged as sent. */
function answered(body: object): GatewayResult {
  return { kind: 'json', status: 200, body: Buffer.from(JSON.stringify(body)), outcome: { responseBody: body, usage: null, servedModel: null } };
}
