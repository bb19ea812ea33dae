import type { EventSourceMessage } from 'eventsource-parser';
import type { RequestContext } from '../../context/request-context';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { AnswerOutcome } from '../../context/attempt';
import { type ChatCompletionChunk, type ChatStreamDecoder, reasoningText } from '../../providers/chat-format';
import { usageFromOpenAI } from '../../providers/openai-usage';
import type { NormalizedUsage } from '../../providers/usage';
import type { SseStreamHandler } from '../upstream/sse-relay';

/** Writes OpenAI chat chunks in another API's stream format, and assembles its answer. */
export interface ChatChunkEncoder {
  onChunk(chunk: ChatCompletionChunk): string[];
  /** The closing events, once the provider's stream is complete. */
  finish(): string[];
}

/**
 * A chat completion stream (any provider, decoded into OpenAI chunks) written to a client
 * of another format (Anthropic's events, the typed Responses events) by `encoder`. Notes
 * the time to first token (text, tool calls or reasoning), closes the answer when the
 * provider's stream is complete, and at the end gives the assembled answer and its usage
 * as the stream's outcome (for the log and the output guardrails).
 */
export abstract class ChatBridgeStreamHandler implements SseStreamHandler {
  private usage: NormalizedUsage | null = null;
  private done = false;
  private ttftMs: number | null = null;

  constructor(
    protected readonly context: RequestContext,
    private readonly decoder: ChatStreamDecoder,
    private readonly encoder: ChatChunkEncoder,
  ) {}

  /** The client format's error event, sent when the stream fails after it started. */
  abstract errorFrame(error: LoggedError): string;

  /** The answer as the client's SDK would assemble it from the stream. */
  protected abstract assembled(): Record<string, unknown>;

  onEvent(event: EventSourceMessage): string[] {
    const frames: string[] = [];
    for (const chunk of this.decoder.onEvent(event)) {
      // Usage as chat reports it: it keeps the cache writes a translated Anthropic answer counts apart.
      if (chunk.usage) this.usage = usageFromOpenAI(chunk.usage);
      const delta = chunk.choices?.[0]?.delta;
      if (delta && ((typeof delta.content === 'string' && delta.content) || delta.tool_calls || reasoningText(delta))) this.ttftMs ??= this.context.elapsedMs();
      frames.push(...this.encoder.onChunk(chunk));
    }
    if (!this.done && this.decoder.isComplete()) {
      this.done = true;
      frames.push(...this.encoder.finish());
    }
    return frames;
  }

  isComplete(): boolean {
    return this.done;
  }

  finish(): AnswerOutcome {
    const answer = this.assembled();
    return { responseBody: answer, usage: this.usage, servedModel: typeof answer.model === 'string' ? answer.model : null, ttftMs: this.ttftMs };
  }
}
