import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../../context/request-context';
import { routeRequest } from '../routing/provider-routing.guard';
import type { GatewayResult } from '../routing/gateway-result';
import { ChatService } from '../chat/chat.service';
import { ChatCompletionCreateDto } from '../chat/dto/chat-completion-create.dto';
import { RouteResolver } from '../routing/route-resolver';
import type { WorkspaceScope } from '../../context/caller';
import { OVERRIDABLE, PromptCallDto } from './dto/prompt-completion.dto';
import { renderTemplate } from './prompt-template';
import { PromptsService, PromptVersion } from './prompts.service';

const ROUTING_HEADERS = ['x-gateway-config', 'x-gateway-virtual-key', 'x-gateway-provider'];

/**
 * `POST /v1/prompts/{id}/completions`: renders a stored template with the call's
 * variables and overrides into a chat completion request, then runs it exactly as
 * `/v1/chat/completions` would (routing, adapters and their translations, cache, log,
 * cost). `render` builds the same request without sending it.
 */
@Injectable()
export class PromptCompletionsService {
  constructor(
    private readonly prompts: PromptsService,
    private readonly resolver: RouteResolver,
    private readonly chat: ChatService,
  ) {}

  /** `version` (the body's, else the query's) pins one; default the latest. An admin call: the prompt is looked up in its scope. */
  async render(scope: WorkspaceScope, slugOrId: string, call: PromptCallDto, version?: number): Promise<Record<string, unknown>> {
    const prompt = await this.prompts.versionIn(scope, slugOrId, call.version ?? version);
    return { object: 'prompt.render', prompt_id: prompt.id, slug: prompt.slug, version: prompt.version, request: chatRequest(prompt, call) };
  }

  /** A model call: the prompt is one of the calling key's workspace (another workspace's is unknown). */
  async complete(context: RequestContext, slugOrId: string, call: PromptCallDto, version?: number): Promise<GatewayResult> {
    const prompt = await this.prompts.version(context.principal!.workspaceId, slugOrId, call.version ?? version);
    context.promptId = prompt.id;
    context.promptVersion = prompt.version;
    if (call.metadata) Object.assign(context.metadata, call.metadata);
    const body = chatRequest(prompt, call);
    // The log keeps the call (its variables) and the request it became.
    context.logRequestAs({ ...call, request: body });
    await routeRequest(this.resolver, context, routingHeaders(context.requestHeaders, prompt), body.model);
    return this.chat.create(context, body as ChatCompletionCreateDto);
  }
}

/** The chat request of a call: the template rendered, its hyperparameters, the call's overrides over them. */
function chatRequest(prompt: PromptVersion, call: PromptCallDto): Record<string, unknown> {
  const { messages, hyperparameters } = renderTemplate(prompt.template, call.variables);
  const body: Record<string, unknown> = { model: prompt.template.model, messages, ...hyperparameters };
  for (const field of Object.keys(OVERRIDABLE)) if (call[field] !== undefined && call[field] !== null) body[field] = call[field];
  if (call.stream !== undefined) body.stream = call.stream;
  if (call.stream_options !== undefined) body.stream_options = call.stream_options;
  // Variables may have produced anything: the request is checked as a chat request would be.
  ChatCompletionCreateDto.validateBody(body);
  return body;
}

/** The call's own routing headers win; without any, the template's virtual key or provider. */
function routingHeaders(headers: IncomingHttpHeaders, prompt: PromptVersion): IncomingHttpHeaders {
  if (ROUTING_HEADERS.some((name) => headers[name])) return headers;
  const { virtual_key: virtualKey, provider } = prompt.template;
  if (virtualKey) return { ...headers, 'x-gateway-virtual-key': virtualKey };
  if (provider) return { ...headers, 'x-gateway-provider': provider };
  return headers;
}
