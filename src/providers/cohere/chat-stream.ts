import { randomUUID } from 'node:crypto';
import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk, ChatDelta, ChatFinishReason, ChatStreamDecoder } from '../chat-format';
import { parseStreamEvent } from '../stream-event';
import { finishReasonFromCohere, usageFromCohere } from './cohere-usage';

/**
 * Cohere's v2 chat stream as OpenAI chunks. Every event names its `type`:
 * `message-start` (the id) opens the choice; `content-delta` carries text (or, for
 * reasoning models, `thinking`); `tool-plan-delta` what the model says before calling
 * tools (content, as in chat-response.ts); `tool-call-start` a call's id and name,
 * `tool-call-delta` pieces of its arguments; `message-end` the finish reason and usage,
 * after which the stream is complete. `content-start`/`-end`, `tool-call-end` and
 * citation events carry nothing a chat client reads.
 */
export class CohereChatStreamDecoder implements ChatStreamDecoder {
  private id: string | null = null;
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private toolCalls = 0;
  private complete = false;

  constructor(private readonly model: string) {}

  onEvent(event: EventSourceMessage): ChatCompletionChunk[] {
    const data = parseStreamEvent(event.data, 'cohere');
    if (this.complete) return [];
    const type = data.type ?? event.event;
    const message = data.delta?.message;
    const chunks: ChatCompletionChunk[] = [];
    switch (type) {
      case 'message-start':
        if (typeof data.id === 'string') this.id = data.id;
        this.start(chunks);
        break;
      case 'content-delta': {
        this.start(chunks);
        const content = message?.content;
        if (typeof content?.text === 'string' && content.text) chunks.push(this.chunk({ content: content.text }));
        else if (typeof content?.thinking === 'string' && content.thinking) chunks.push(this.chunk({ reasoning_content: content.thinking }));
        break;
      }
      case 'tool-plan-delta':
        this.start(chunks);
        if (typeof message?.tool_plan === 'string' && message.tool_plan) chunks.push(this.chunk({ content: message.tool_plan }));
        break;
      case 'tool-call-start': {
        this.start(chunks);
        const call = message?.tool_calls;
        if (typeof call?.function?.name !== 'string')
          throw GatewayError.upstreamMalformed('Provider cohere sent a tool-call-start event without a function name');
        const args = typeof call.function.arguments === 'string' ? call.function.arguments : '';
        const id = typeof call.id === 'string' ? call.id : `call_${randomUUID().replace(/-/g, '')}`;
        chunks.push(this.chunk({ tool_calls: [{ index: this.toolCalls++, id, type: 'function', function: { name: call.function.name, arguments: args } }] }));
        break;
      }
      case 'tool-call-delta': {
        const args = message?.tool_calls?.function?.arguments;
        if (this.toolCalls === 0) throw GatewayError.upstreamMalformed('Provider cohere sent a tool-call-delta event before any tool-call-start');
        if (typeof args === 'string' && args) chunks.push(this.chunk({ tool_calls: [{ index: this.toolCalls - 1, function: { arguments: args } }] }));
        break;
      }
      case 'message-end': {
        this.start(chunks);
        this.complete = true;
        const reason = this.toolCalls > 0 ? 'tool_calls' : finishReasonFromCohere(data.delta?.finish_reason);
        chunks.push(this.chunk({}, reason));
        const usage = usageFromCohere(data.delta?.usage);
        if (usage) chunks.push({ ...this.envelope(), choices: [], usage });
        break;
      }
      default:
        // An error object instead of an event: the stream cannot go on.
        if (type === undefined && typeof data.message === 'string') throw new GatewayError(502, 'upstream_error', data.message);
    }
    return chunks;
  }

  isComplete(): boolean {
    return this.complete;
  }

  /** OpenAI opens the choice with a role chunk; clients build the message from it. */
  private start(chunks: ChatCompletionChunk[]): void {
    if (this.started) return;
    this.started = true;
    chunks.push(this.chunk({ role: 'assistant', content: '' }));
  }

  private envelope() {
    this.id ??= `chatcmpl-${randomUUID()}`;
    return { id: this.id, object: 'chat.completion.chunk' as const, created: this.created, model: this.model };
  }

  private chunk(delta: ChatDelta, finishReason: ChatFinishReason | null = null): ChatCompletionChunk {
    return { ...this.envelope(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
  }
}
