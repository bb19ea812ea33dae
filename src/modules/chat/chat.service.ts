import { Injectable } from '@nestjs/common';
import type { EventSourceMessage } from 'eventsource-parser';
import type { LoggedError, RequestContext } from '../../common/context/request-context';
import type { GatewayResult } from '../../common/http/gateway-result';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { RouteExecutor } from '../routing/route-executor.service';
import type { RouteTarget } from '../routing/route-plan';
import { relayUpstreamSse, SseStreamHandler } from '../upstream/sse-relay';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { ChatStreamAssembler } from './chat-stream-assembler';
import type { ChatCompletionCreateDto } from './dto/chat-completion-create.dto';

const sseFrame = (data: string, event?: string) => (event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);

const CHAT_COMPLETIONS: OperationSpec = { capability: 'chatCompletions', title: 'chat completions', usage: usageFromOpenAI };

/**
 * `chat.completions`: the route executor picks targets; each attempt prepares the body
 * for the target's provider, sends it, and turns the answer into a GatewayResult
 * (bytes passed through, or SSE frames as they come), noting usage, the assembled
 * response and time to first token on the context.
 */
@Injectable()
export class ChatService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

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
    // Usage in streams comes only on request; ask for it and hide it if the client did not.
    const streamOptions = upstreamBody.stream_options as ChatCompletionCreateDto['stream_options'];
    const clientWantsUsage = streamOptions?.include_usage === true;
    const sent = context.isStream && !clientWantsUsage ? { ...upstreamBody, stream_options: { ...streamOptions, include_usage: true } } : upstreamBody;

    const answer = await this.attempts.send(context, target, sent, CHAT_COMPLETIONS);
    const contentType = String(answer.response.headers['content-type'] ?? '');
    if (context.isStream && contentType.includes('text/event-stream')) {
      const frames = await relayUpstreamSse(answer.response, context, answer.timeoutMs, new ChatStreamHandler(context, !clientWantsUsage));
      return { kind: 'sse', status: answer.response.status, frames };
    }
    return this.attempts.readJson(context, answer, CHAT_COMPLETIONS);
  }
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
