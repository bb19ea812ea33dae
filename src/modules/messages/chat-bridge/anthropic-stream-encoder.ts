import { sseFrame } from '../../../common/http/sse-frame';
import type { ChatCompletionChunk } from '../../../providers/chat-format';
import { AnthropicMessageAssembler } from '../anthropic-message-assembler';
import { anthropicUsageFromOpenAI, messageId, stopReasonFromOpenAI } from './chat-to-messages';

/**
 * OpenAI chat completion chunks (first choice) written as Anthropic's stream:
 * `message_start`, a `content_block_start` / deltas / `content_block_stop` per text run
 * or tool call, then `message_delta` (stop reason, usage) and `message_stop` from
 * `finish()`. The events also feed an assembler, so `message()` is what an Anthropic
 * SDK would make of them (for the log).
 */
export class AnthropicStreamEncoder {
  private readonly assembler = new AnthropicMessageAssembler();
  private started = false;
  /** The open content block: its index, and which tool call it is when it is one. */
  private open: { index: number; toolCall: number | null } | null = null;
  private blocks = 0;
  private stopReason: string | null = null;
  private usage: Record<string, any> | null = null;

  constructor(private readonly model: string) {}

  onChunk(chunk: ChatCompletionChunk): string[] {
    const frames = this.start(chunk);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return frames;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      if (!this.open || this.open.toolCall !== null) frames.push(...this.openBlock({ type: 'text', text: '' }, null));
      frames.push(this.emit({ type: 'content_block_delta', index: this.open!.index, delta: { type: 'text_delta', text: delta.content } }));
    }
    for (const call of delta.tool_calls ?? []) {
      const ordinal = typeof call.index === 'number' ? call.index : 0;
      if (this.open?.toolCall !== ordinal) {
        frames.push(...this.openBlock({ type: 'tool_use', id: call.id ?? `toolu_${ordinal}`, name: call.function?.name ?? '', input: {} }, ordinal));
      }
      const fragment = call.function?.arguments;
      if (typeof fragment === 'string' && fragment) {
        frames.push(this.emit({ type: 'content_block_delta', index: this.open!.index, delta: { type: 'input_json_delta', partial_json: fragment } }));
      }
    }
    if (choice.finish_reason) this.stopReason = stopReasonFromOpenAI(choice.finish_reason);
    return frames;
  }

  /** The closing events, once the provider's stream is complete. */
  finish(): string[] {
    const frames = [...this.start(null), ...this.closeBlock()];
    const usage = anthropicUsageFromOpenAI(this.usage);
    frames.push(this.emit({ type: 'message_delta', delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null }, usage }));
    frames.push(this.emit({ type: 'message_stop' }));
    return frames;
  }

  /** The message the events so far amount to. */
  message(): Record<string, any> {
    return this.assembler.message();
  }

  private start(chunk: ChatCompletionChunk | null): string[] {
    if (this.started) return [];
    this.started = true;
    const message = {
      id: messageId(chunk?.id),
      type: 'message',
      role: 'assistant',
      model: typeof chunk?.model === 'string' && chunk.model ? chunk.model : this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // The input count arrives with the provider's last chunk: message_delta carries it.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return [this.emit({ type: 'message_start', message })];
  }

  private openBlock(block: Record<string, unknown>, toolCall: number | null): string[] {
    const frames = this.closeBlock();
    this.open = { index: this.blocks++, toolCall };
    frames.push(this.emit({ type: 'content_block_start', index: this.open.index, content_block: block }));
    return frames;
  }

  private closeBlock(): string[] {
    if (!this.open) return [];
    const frame = this.emit({ type: 'content_block_stop', index: this.open.index });
    this.open = null;
    return [frame];
  }

  private emit(event: Record<string, any>): string {
    this.assembler.add(event);
    return sseFrame(JSON.stringify(event), event.type);
  }
}
