import { sseFrame } from '../../../common/http/sse-frame';
import { type ChatCompletionChunk, type ChatDelta, type ChatToolCallDelta, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import { AnthropicMessageAssembler } from '../anthropic-message-assembler';
import { anthropicUsageFromOpenAI, generatedId, messageId, stopReasonFromOpenAI, thinkingBlock } from './chat-to-messages';

type Frames = string[];
/** One Anthropic stream event. */
type AnthropicEvent = Record<string, unknown> & { type: string };
/** The open content block: its kind; for a tool call also its OpenAI `index` and id, which its later deltas match. */
interface OpenBlock {
  index: number;
  kind: 'text' | 'thinking' | 'tool_use';
  toolCall: { index: number; id: string } | null;
}

/**
 * OpenAI chat completion chunks (first choice) written as Anthropic's stream, event for
 * event as Anthropic sends it: `message_start` with the first chunk, then per text run
 * or tool call a `content_block_start`, its deltas (`text_delta`, `input_json_delta`
 * with each argument fragment as it came) and a `content_block_stop`; `finish()` adds
 * `message_delta` (stop reason, usage) and `message_stop`. Chat has no usage before its
 * last chunk, so `message_start` counts zero and `message_delta` carries every count.
 * No `ping`: it carries nothing and clients skip it. Reasoning text that some providers
 * stream apart (`reasoning_content`) becomes a thinking block with `thinking_delta`s
 * when the client asked for thinking, and is left out otherwise (Anthropic sends no
 * thinking unasked). Every event also feeds an assembler, so
 * `message()` is what an Anthropic SDK would make of the stream (for the log).
 */
export class AnthropicStreamEncoder {
  private readonly assembler = new AnthropicMessageAssembler();
  private started = false;
  private finished = false;
  private open: OpenBlock | null = null;
  private blockCount = 0;
  private finishReason: unknown = null;
  private hasToolCalls = false;
  private refused = false;
  private usage: ChatUsage | null = null;

  /** `model` is the model the request named, for a stream whose chunks do not say; `thinking`: the client asked for thinking. */
  constructor(
    private readonly model: string,
    private readonly thinking = false,
  ) {}

  onChunk(chunk: ChatCompletionChunk): Frames {
    if (this.finished) return [];
    const frames = this.start(chunk);
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return frames;
    const delta: ChatDelta = choice.delta ?? {};
    // A refusal is what the model said: text, ending the message as a refusal.
    if (typeof delta.refusal === 'string' && delta.refusal) this.refused = true;
    const reasoning = this.thinking ? reasoningText(delta) : '';
    if (reasoning) {
      const index = this.thinkingBlock(frames);
      frames.push(this.emit({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reasoning } }));
    }
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text !== 'string' || !text) continue;
      const index = this.textBlock(frames);
      frames.push(this.emit({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const index = this.toolBlock(call, frames);
      const fragment = call.function?.arguments;
      if (typeof fragment === 'string' && fragment)
        frames.push(this.emit({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: fragment } }));
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return frames;
  }

  /** The closing events, once the provider's stream is complete; `message_start` first if no chunk came. */
  finish(): Frames {
    if (this.finished) return [];
    this.finished = true;
    const frames = [...this.start(null), ...this.closeBlock()];
    frames.push(
      this.emit({
        type: 'message_delta',
        delta: { stop_reason: stopReasonFromOpenAI(this.finishReason, this.hasToolCalls, this.refused), stop_sequence: null },
        usage: anthropicUsageFromOpenAI(this.usage),
      }),
    );
    frames.push(this.emit({ type: 'message_stop' }));
    return frames;
  }

  /** The message the events so far amount to. */
  message(): Record<string, unknown> {
    return this.assembler.message();
  }

  private start(chunk: ChatCompletionChunk | null): Frames {
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
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return [this.emit({ type: 'message_start', message })];
  }

  /** The index of the open text block, opening one after another kind of block or at the start. */
  private textBlock(frames: Frames): number {
    if (this.open?.kind === 'text') return this.open.index;
    return this.openBlock({ type: 'text', text: '' }, null, frames);
  }

  /** The index of the open thinking block, opening one when another kind is open. */
  private thinkingBlock(frames: Frames): number {
    if (this.open?.kind === 'thinking') return this.open.index;
    return this.openBlock(thinkingBlock(''), null, frames);
  }

  /**
   * The index of the block of a tool call delta. OpenAI names a call (id, function name)
   * in its first delta and sends only its `index` with the argument fragments after; a
   * new index, or a new id from a server that leaves `index` out, is a new call.
   */
  private toolBlock(call: ChatToolCallDelta, frames: Frames): number {
    const current = this.open?.toolCall;
    const ordinal = typeof call.index === 'number' ? call.index : (current?.index ?? 0);
    const id = typeof call.id === 'string' && call.id ? call.id : null;
    if (this.open && current && current.index === ordinal && (id === null || id === current.id)) return this.open.index;
    this.hasToolCalls = true;
    const block = { type: 'tool_use', id: id ?? generatedId('toolu_'), name: call.function?.name ?? '', input: {} };
    return this.openBlock(block, { index: ordinal, id: block.id }, frames);
  }

  private openBlock(block: Record<string, unknown>, toolCall: OpenBlock['toolCall'], frames: Frames): number {
    frames.push(...this.closeBlock());
    const index = this.blockCount++;
    this.open = { index, kind: block.type as OpenBlock['kind'], toolCall };
    frames.push(this.emit({ type: 'content_block_start', index, content_block: block }));
    return index;
  }

  private closeBlock(): Frames {
    if (!this.open) return [];
    const frame = this.emit({ type: 'content_block_stop', index: this.open.index });
    this.open = null;
    return [frame];
  }

  private emit(event: AnthropicEvent): string {
    this.assembler.add(event);
    return sseFrame(JSON.stringify(event), event.type);
  }
}
