import type { EventSourceMessage } from 'eventsource-parser';
import type { LoggedError, RequestContext } from '../../common/context/request-context';
import type { ChatStreamDecoder } from '../../providers/chat-format';
import { usageFromOpenAI } from '../../providers/openai-usage';
import type { NormalizedUsage } from '../../providers/usage';
import type { SseStreamHandler } from '../upstream/sse-relay';
import { anthropicErrorFrame } from '../../common/errors/anthropic-error';
import { AnthropicStreamEncoder } from './chat-bridge/anthropic-stream-encoder';

/**
 * A chat completion stream (any provider, decoded into OpenAI chunks) written to an
 * Anthropic client as Anthropic's events; the encoder closes the message when the
 * provider's stream is complete.
 */
export class ChatToMessagesStreamHandler implements SseStreamHandler {
  private readonly encoder: AnthropicStreamEncoder;
  private usage: NormalizedUsage | null = null;
  private done = false;

  constructor(
    private readonly context: RequestContext,
    private readonly decoder: ChatStreamDecoder,
    model: string,
    thinking = false,
  ) {
    this.encoder = new AnthropicStreamEncoder(model, thinking);
  }

  onEvent(event: EventSourceMessage): string[] {
    const frames: string[] = [];
    for (const chunk of this.decoder.onEvent(event)) {
      if (chunk.usage) this.usage = usageFromOpenAI(chunk.usage);
      const delta = chunk.choices?.[0]?.delta;
      if (delta && ((typeof delta.content === 'string' && delta.content) || delta.tool_calls)) this.context.markFirstToken();
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

  errorFrame(error: LoggedError): string {
    return anthropicErrorFrame(error);
  }

  finish(): void {
    const message = this.encoder.message();
    this.context.responseBody = message;
    this.context.usage = this.usage;
    this.context.servedModel = typeof message.model === 'string' ? message.model : null;
  }
}
