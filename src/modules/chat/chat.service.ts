import { Injectable } from '@nestjs/common';
import type { EventSourceMessage } from 'eventsource-parser';
import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import { sseFrame } from '../../common/http/sse-frame';
import type { GatewayResult } from '../routing/gateway-result';
import type { ChatCompletionBody, ChatCompletionChunk, ChatStreamDecoder } from '../../providers/chat-format';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { estimatedStreamUsage } from '../../providers/usage';
import type { AnswerOutcome, Attempt } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import type { SseStreamHandler } from '../upstream/sse-relay';
import { UpstreamAttempt } from '../upstream/upstream-attempt';
import { ChatStreamAssembler } from './chat-stream-assembler';
import { CHAT_COMPLETIONS, ChatUpstream } from './chat-upstream';
import type { ChatCompletionCreateDto } from './dto/chat-completion-create.dto';
import { parseStreamEvent } from '../../providers/stream-event';
import { ModelOperation } from '../model-operation/model-operation';
import { CHAT_DIALECT, chatErrorFrame } from './chat-dialect';

/**
 * `chat.completions`: the route executor picks targets; each attempt prepares the body
 * for the target's provider, sends it, and turns the answer into a GatewayResult whose
 * outcome carries the usage, the assembled response and time to first token.
 * Providers in OpenAI's format are passed through byte for byte (the hot path); the
 * others (Anthropic, Gemini) are translated by their adapter through ChatUpstream.
 */
@Injectable()
export class ChatService {
  constructor(
    private readonly operation: ModelOperation,
    private readonly attempts: UpstreamAttempt,
    private readonly chatUpstream: ChatUpstream,
  ) {}

  create(context: RequestContext, body: ChatCompletionCreateDto): Promise<GatewayResult> {
    return this.operation.run(context, body, CHAT_DIALECT, (target, upstreamBody, attempt) =>
      this.chatUpstream.capability(target).translation
        ? this.translatedAttempt(context, attempt, target, upstreamBody)
        : this.attempt(context, attempt, target, upstreamBody),
    );
  }

  /** One attempt at an OpenAI-format target (the executor retries and falls back). */
  private async attempt(context: RequestContext, attempt: Attempt, target: RouteTarget, upstreamBody: Record<string, unknown>): Promise<GatewayResult> {
    // Usage in streams comes only on request; ask for it and hide it if the client did not.
    const clientWantsUsage = wantsUsage(upstreamBody);
    const streamOptions = upstreamBody.stream_options as ChatCompletionCreateDto['stream_options'];
    const sent = context.isStream && !clientWantsUsage ? { ...upstreamBody, stream_options: { ...streamOptions, include_usage: true } } : upstreamBody;

    const answer = await this.attempts.send(context, attempt, target, sent, CHAT_COMPLETIONS);
    return this.attempts.answer(context, attempt, answer, CHAT_COMPLETIONS, () => new ChatStreamHandler(context, !clientWantsUsage, null));
  }

  /** One attempt at a target whose adapter translates to and from its own format. */
  private async translatedAttempt(
    context: RequestContext,
    attempt: Attempt,
    target: RouteTarget,
    upstreamBody: Record<string, unknown>,
  ): Promise<GatewayResult> {
    const answer = await this.chatUpstream.open(context, attempt, target, upstreamBody as ChatCompletionBody);
    if (answer.kind === 'stream') return this.attempts.stream(context, answer.sent, new ChatStreamHandler(context, !wantsUsage(upstreamBody), answer.decoder));
    const { completion } = answer;
    const outcome = {
      responseBody: completion,
      usage: usageFromOpenAI(completion.usage),
      servedModel: typeof completion.model === 'string' ? completion.model : null,
    };
    return { kind: 'json', status: answer.status, body: Buffer.from(JSON.stringify(completion)), outcome };
  }
}

function wantsUsage(body: Record<string, unknown>): boolean {
  return (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
}

/**
 * A chat completion stream: forwards each chunk, assembles the final object and usage
 * for the log, and hides the usage chunk the gateway asked for when the client did not.
 * With a decoder (a translated vendor) chunks are re-encoded; without, OpenAI's own
 * events pass through as they came unless the usage has to be hidden.
 */
export class ChatStreamHandler implements SseStreamHandler {
  private readonly assembler = new ChatStreamAssembler();
  private sawDone = false;
  private ttftMs: number | null = null;
  /** An error chunk's error (a provider reporting a failure inside the stream). */
  private error: LoggedError | null = null;

  constructor(
    private readonly context: RequestContext,
    private readonly hideUsage: boolean,
    private readonly decoder: ChatStreamDecoder | null,
  ) {}

  onEvent(event: EventSourceMessage): string[] {
    if (!this.decoder) {
      if (event.data === '[DONE]') {
        this.sawDone = true;
        return [sseFrame('[DONE]')];
      }
      const frame = this.onChunk(parseStreamEvent(event.data) as ChatCompletionChunk);
      return frame === null ? [] : [frame === UNCHANGED ? sseFrame(event.data, event.event) : frame];
    }
    const frames: string[] = [];
    for (const chunk of this.decoder.onEvent(event)) {
      const frame = this.onChunk(chunk);
      if (frame !== null) frames.push(frame === UNCHANGED ? sseFrame(JSON.stringify(chunk)) : frame);
    }
    if (!this.sawDone && this.decoder.isComplete()) {
      this.sawDone = true;
      frames.push(sseFrame('[DONE]'));
    }
    return frames;
  }

  /** The frame for one chunk: UNCHANGED to send it as it is, null to drop it. */
  private onChunk(chunk: ChatCompletionChunk): string | typeof UNCHANGED | null {
    if (chunk.error) this.error ??= { type: 'upstream_error', code: chunk.error.code ?? null, message: String(chunk.error.message) };
    if (this.assembler.add(chunk)) this.ttftMs ??= this.context.elapsedMs();
    if (this.hideUsage && chunk.usage) {
      if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) return null; // the extra usage-only chunk
      const { usage: _hidden, ...rest } = chunk;
      return sseFrame(JSON.stringify(rest));
    }
    return UNCHANGED;
  }

  isComplete(): boolean {
    return this.sawDone;
  }

  errorFrame(error: LoggedError): string {
    return chatErrorFrame(error);
  }

  finish(): AnswerOutcome {
    const responseBody = this.assembler.result();
    const servedModel = typeof responseBody.model === 'string' ? responseBody.model : null;
    const outcome = { responseBody, usage: this.assembler.usage, servedModel, ttftMs: this.ttftMs, error: this.error };
    // A stream that ended before the usage chunk (client gone, stream broken) still cost something.
    if (outcome.usage || !this.assembler.contentChunks) return outcome;
    return { ...outcome, usage: estimatedStreamUsage(this.context.requestBody, this.assembler.contentChunks), usageEstimated: true };
  }
}

const UNCHANGED = Symbol('unchanged');
