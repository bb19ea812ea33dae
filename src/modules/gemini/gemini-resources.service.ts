import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../routing/gateway-result';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { ProviderRegistry } from '../../providers/registry';
import { isObject } from '../../providers/translation-checks';
import { RouteExecutor } from '../routing/route-executor';
import type { Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { estimateInputTokens } from '../messages/count-tokens/token-estimator';
import { geminiToChatBody } from './chat-bridge/gemini-to-chat';
import { inGoogleShape, servesNatively } from './gemini.service';

/** Counting is free at Google: the row's cost is 0, not unknown. */
const COUNT: OperationSpec = { capability: 'geminiCountTokens', title: "Gemini's countTokens", usage: () => null, cost: () => 0 };
/** Gemini's embeddings answer no usage. */
const GEMINI_EMBED: OperationSpec = { capability: 'geminiEmbed', title: "Gemini's embedContent", usage: () => null };
const EMBEDDINGS: OperationSpec = { capability: 'embeddings', title: 'embeddings', usage: usageFromOpenAI };
const MODELS = { capability: 'models' as const, title: 'a model list', usage: () => null };

type Json = Record<string, unknown>;

/**
 * Gemini's routes besides generation: `countTokens`, `embedContent` /
 * `batchEmbedContents` and the model list, each native to Gemini and answered in Gemini's
 * shape for every other provider (an estimate, OpenAI's embeddings, OpenAI's model list).
 * Routed like every request; never cached.
 */
@Injectable()
export class GeminiResourcesService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    private readonly registry: ProviderRegistry,
  ) {}

  /** `{totalTokens}`: counted by Gemini, else estimated with the gateway's tokenizer (nothing sent, nothing reserved). */
  countTokens(context: RequestContext, body: Json): Promise<GatewayResult> {
    return this.executor.execute(
      context.begin({ body }),
      body,
      async (target, upstreamBody, attempt) => {
        if (servesNatively(this.registry.get(target.provider).geminiCountTokens, upstreamBody)) {
          const sent = await this.attempts.send(context, attempt, target, withInnerModel(upstreamBody), COUNT);
          return this.attempts.readJson(context, attempt, sent, COUNT);
        }
        return json({ totalTokens: estimatedTokens(upstreamBody, target.provider) }, 0);
      },
      { cacheable: false, budgeted: false },
    );
  }

  /** `embedContent` (`{content}` → `{embedding}`) and `batchEmbedContents` (`{requests}` → `{embeddings}`). */
  embed(context: RequestContext, body: Json): Promise<GatewayResult> {
    return this.executor.execute(context.begin({ body }), body, (target, upstreamBody, attempt) =>
      servesNatively(this.registry.get(target.provider).geminiEmbed, upstreamBody)
        ? this.attempts.json(context, attempt, target, upstreamBody, GEMINI_EMBED)
        : this.embedThroughOpenAI(context, attempt, target, upstreamBody),
    );
  }

  /** The texts as one OpenAI embeddings request; its vectors back in Gemini's shape, its usage priced. */
  private async embedThroughOpenAI(context: RequestContext, attempt: Attempt, target: RouteTarget, body: Json): Promise<GatewayResult> {
    const batch = Array.isArray(body.requests);
    const requests = batch ? (body.requests as unknown[]) : [body];
    const dimensions = new Set<unknown>();
    const input = requests.map((request, i) => {
      const at = batch ? `requests[${i}].` : '';
      if (!isObject(request)) throw GatewayError.invalidRequest(`${at || 'body'} must be an object`, at || null);
      dimensions.add(request.outputDimensionality ?? request.output_dimensionality);
      return contentText(request.content, `${at}content`);
    });
    if (dimensions.size > 1) throw GatewayError.invalidRequest('Every request of a batch must ask for the same outputDimensionality', 'requests');
    const [size] = dimensions;
    const openAIBody = { model: body.model, input, ...(typeof size === 'number' ? { dimensions: size } : {}) };
    const result = await this.attempts.json(context, attempt, target, openAIBody, EMBEDDINGS).catch((error: unknown) => {
      throw inGoogleShape(error);
    });
    if (result.kind !== 'json') return result;
    const data = (result.outcome.responseBody as Json).data;
    const vectors = (Array.isArray(data) ? data : []).map((item) => ({ values: isObject(item) && Array.isArray(item.embedding) ? item.embedding : [] }));
    const answer = batch ? { embeddings: vectors } : { embedding: vectors[0] ?? { values: [] } };
    return { ...result, body: Buffer.from(JSON.stringify(answer)), outcome: { ...result.outcome, responseBody: answer } };
  }

  /** `GET /v1beta/models[/{model}]`: Gemini's own list, or an OpenAI-shaped provider's as Gemini models. */
  models(context: RequestContext, query: string, model?: string): Promise<GatewayResult> {
    return this.executor.execute(
      context.begin({}),
      {},
      async (target, _body, attempt) => {
        const path = model === undefined ? '' : `/${encodeURIComponent(model.replace(/^models\//, ''))}`;
        const native = this.registry.get(target.provider).geminiModels;
        if (native) {
          const sent = await this.attempts.sendRequest(context, target, native.request('GET', path, query, target));
          return this.attempts.readJson(context, attempt, sent, MODELS);
        }
        const capability = this.attempts.capability(target, MODELS);
        const sent = await this.attempts.sendRequest(context, target, capability.request('GET', path, '', target)).catch((error: unknown) => {
          throw inGoogleShape(error);
        });
        const { json: answer } = await this.attempts.readJsonObject(context, sent);
        if (model !== undefined) return json(geminiModel(answer));
        return json({ models: (Array.isArray(answer.data) ? answer.data : []).filter(isObject).map(geminiModel) });
      },
      { cacheable: false, budgeted: false },
    );
  }
}

/** A `generateContentRequest` counted whole names its model, which must be the one routed to. */
function withInnerModel(body: Json): Json {
  const inner = body.generateContentRequest ?? body.generate_content_request;
  if (!isObject(inner)) return body;
  const key = body.generateContentRequest !== undefined ? 'generateContentRequest' : 'generate_content_request';
  return { ...body, [key]: { ...inner, model: `models/${String(body.model).replace(/^models\//, '')}` } };
}

/** The input tokens of what the body counts (its `contents`, or a whole `generateContentRequest`), as the chat it would become. */
function estimatedTokens(body: Json, provider: string): number {
  const inner = body.generateContentRequest ?? body.generate_content_request;
  const counted = isObject(inner) ? { ...inner, model: body.model } : { model: body.model, contents: body.contents };
  const chat = geminiToChatBody(counted, provider);
  const messages = chat.messages.map((message) => ({
    role: message.role,
    content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ('tool_calls' in message ? message.tool_calls : '')),
  }));
  const tools = (chat.tools ?? []).map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    input_schema: tool.function.parameters,
  }));
  return estimateInputTokens({ messages, tools });
}

/** The text of an embedding's Content: its text parts joined (Gemini embeds text only). */
function contentText(content: unknown, at: string): string {
  if (!isObject(content) || !Array.isArray(content.parts)) throw GatewayError.invalidRequest(`${at} must be a Content with parts`, at);
  return content.parts
    .map((part, i) => {
      if (!isObject(part) || typeof part.text !== 'string') throw GatewayError.invalidRequest(`${at}.parts[${i}] must be a text part`, `${at}.parts[${i}]`);
      return part.text;
    })
    .join('');
}

/** An OpenAI model as a Gemini model (what ListModels gives; the methods are those the gateway serves for it). */
function geminiModel(model: Json): Json {
  const id = (typeof model.id === 'string' ? model.id : '').replace(/^models\//, '');
  return { name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent', 'countTokens', 'embedContent', 'batchEmbedContents'] };
}

/** An answer the gateway made (not the provider's bytes), logged as sent. */
function json(answer: Json, costUsd: number | null = null): GatewayResult {
  return { kind: 'json', status: 200, body: Buffer.from(JSON.stringify(answer)), outcome: { responseBody: answer, usage: null, servedModel: null, costUsd } };
}
