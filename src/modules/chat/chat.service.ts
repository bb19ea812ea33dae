import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { EventSourceMessage } from 'eventsource-parser';
import type { LoggedError, RequestContext } from '../../common/context/request-context';
import { GatewayError, UpstreamHttpError } from '../../common/errors/gateway-error';
import type { GatewayResult } from '../../common/http/gateway-result';
import type { Environment } from '../../config/environment';
import { ProviderRegistry } from '../../providers/registry';
import { RouteExecutor } from '../routing/route-executor.service';
import type { RouteTarget } from '../routing/route-plan';
import { relayUpstreamSse, SseStreamHandler } from '../upstream/sse-relay';
import { UpstreamClient } from '../upstream/upstream-client';
import { ChatStreamAssembler } from './chat-stream-assembler';
import type { ChatCompletionCreateDto } from './dto/chat-completion-create.dto';
import { usageFromOpenAI } from './openai-usage';

const sseFrame = (data: string, event?: string) => (event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);

/**
 * `chat.completions`: the route executor picks targets; each attempt prepares the body
 * for the target's provider, sends it, and turns the answer into a GatewayResult
 * (bytes passed through, or SSE frames as they come), noting usage, the assembled
 * response and time to first token on the context.
 */
@Injectable()
export class ChatService {
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly upstream: UpstreamClient,
    private readonly executor: RouteExecutor,
    config: ConfigService<Environment, true>,
  ) {
    this.defaultTimeoutMs = config.get('UPSTREAM_TIMEOUT_MS', { infer: true });
  }

  create(context: RequestContext, body: ChatCompletionCreateDto): Promise<GatewayResult> {
    context.isStream = body.stream === true;
    context.requestBody = body;
    context.user = body.user ?? context.user;
    return this.executor.execute(context, body as unknown as Record<string, unknown>, (target, upstreamBody) =>
      this.attempt(context, target, upstreamBody),
    );
  }

  /** One attempt at one target (the executor retries and falls back). */
  private async attempt(context: RequestContext, target: RouteTarget, upstreamBody: Record<string, unknown>): Promise<GatewayResult> {
    const chat = this.registry.get(target.provider).chatCompletions;
    if (!chat) throw GatewayError.invalidRequest(`Provider ${target.provider} does not offer chat completions`, 'model');
    const model = String(upstreamBody.model);
    if (target.allowedModels && !target.allowedModels.includes(model)) {
      throw GatewayError.permission(`Model '${model}' is not allowed for this virtual key`, 'model_not_allowed');
    }
    context.model = model;

    // Usage in streams comes only on request; ask for it and hide it if the client did not.
    const streamOptions = upstreamBody.stream_options as ChatCompletionCreateDto['stream_options'];
    const clientWantsUsage = streamOptions?.include_usage === true;
    const sent = context.isStream && !clientWantsUsage ? { ...upstreamBody, stream_options: { ...streamOptions, include_usage: true } } : upstreamBody;

    const timeoutMs = target.requestTimeoutMs ?? this.defaultTimeoutMs;
    const response = await this.upstream.send(chat.buildRequest(sent, target), { signal: context.abort.signal, timeoutMs });
    const contentType = String(response.headers['content-type'] ?? '');

    if (response.status >= 400) {
      const raw = await this.upstream.readBody(response, timeoutMs, context.abort.signal);
      throw new UpstreamHttpError(response.status, raw, contentType || 'application/json', passThroughHeaders(response.headers));
    }
    if (context.isStream && contentType.includes('text/event-stream')) {
      const frames = await relayUpstreamSse(response, context, timeoutMs, new ChatStreamHandler(context, !clientWantsUsage));
      return { kind: 'sse', status: response.status, frames };
    }

    const raw = await this.upstream.readBody(response, timeoutMs, context.abort.signal);
    let json: Record<string, any>;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw GatewayError.upstreamMalformed(`The provider answered ${response.status} with a body that is not JSON`);
    }
    context.responseBody = json;
    context.usage = usageFromOpenAI(json.usage);
    context.servedModel = typeof json.model === 'string' ? json.model : null;
    return { kind: 'json', status: response.status, body: raw };
  }
}

/** A provider's rate-limit hints go back to the client with its error. */
function passThroughHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['retry-after', 'retry-after-ms']) {
    const value = headers[name];
    if (value !== undefined) kept[name] = String(value);
  }
  return kept;
}

/**
 * A chat completion stream: forwards each chunk, assembles the final object and usage
 * for the log, and hides the usage chunk the gateway asked for when the client did not.
 */
class ChatStreamHandler implements SseStreamHandler {
  private readonly assembler = new ChatStreamAssembler();
  private sawDone = false;

  constructor(
    private readonly context: RequestContext,
    private readonly hideUsage: boolean,
  ) {}

  onEvent(event: EventSourceMessage): string[] {
    if (event.data === '[DONE]') {
      this.sawDone = true;
      return [sseFrame('[DONE]')];
    }
    let chunk: Record<string, any>;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return [sseFrame(event.data, event.event)];
    }
    if (chunk.error) this.context.error ??= { type: 'upstream_error', code: chunk.error.code ?? null, message: String(chunk.error.message) };
    if (this.assembler.add(chunk)) this.context.markFirstToken();
    if (this.hideUsage && chunk.usage) {
      if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return []; // the extra usage-only chunk
      delete chunk.usage;
      return [sseFrame(JSON.stringify(chunk), event.event)];
    }
    return [sseFrame(event.data, event.event)];
  }

  isComplete(): boolean {
    return this.sawDone;
  }

  errorFrame(error: LoggedError): string {
    return sseFrame(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } }));
  }

  finish(): void {
    const context = this.context;
    context.usage = this.assembler.usage;
    context.responseBody = this.assembler.result();
    const served = context.responseBody as { model?: unknown };
    context.servedModel = typeof served.model === 'string' ? served.model : null;
  }
}
