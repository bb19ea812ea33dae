import type { EventSourceMessage } from 'eventsource-parser';
import type { LoggedError, RequestContext } from '../../common/context/request-context';
import { sseFrame } from '../../common/http/sse-frame';
import type { ChatStreamDecoder } from '../../providers/chat-format';
import { usageFromOpenAI } from '../../providers/openai-usage';
import type { NormalizedUsage } from '../../providers/usage';
import type { SseStreamHandler } from '../upstream/sse-relay';
import { reasoningText } from './chat-bridge/chat-to-response';
import { ResponsesStreamEncoder } from './chat-bridge/responses-stream-encoder';

/**
 * A chat completion stream (any provider, decoded into OpenAI chunks) written to a
 * Responses client as the typed Responses events: the bridged counterpart of
 * `ResponsesStreamHandler`. It notes time to first token, closes the response when the
 * provider's stream is complete, and puts the assembled Response and its usage on the
 * context for the log and the output guardrails.
 */
export class ChatToResponsesStreamHandler implements SseStreamHandler {
  private usage: NormalizedUsage | null = null;
  private done = false;

  constructor(
    private readonly context: RequestContext,
    private readonly decoder: ChatStreamDecoder,
    private readonly encoder: ResponsesStreamEncoder,
  ) {}

  onEvent(event: EventSourceMessage): string[] {
    const frames: string[] = [];
    for (const chunk of this.decoder.onEvent(event)) {
      // Usage as chat reports it: it keeps the cache writes a translated Anthropic answer counts apart.
      if (chunk.usage) this.usage = usageFromOpenAI(chunk.usage);
      const delta = chunk.choices?.[0]?.delta;
      if (delta && ((typeof delta.content === 'string' && delta.content) || delta.tool_calls || reasoningText(delta))) this.context.markFirstToken();
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

  /** OpenAI's own stream error event, numbered after the last event the client saw. */
  errorFrame(error: LoggedError): string {
    const body = { type: 'error', code: error.code, message: error.message, param: null, sequence_number: this.encoder.nextSequence() };
    return sseFrame(JSON.stringify(body), 'error');
  }

  finish(): void {
    const response = this.encoder.response();
    this.context.responseBody = response;
    this.context.usage = this.usage;
    this.context.servedModel = typeof response.model === 'string' ? response.model : null;
  }
}
