import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk, ChatDelta, ChatFinishReason, ChatStreamDecoder } from '../chat-format';
import { parseStreamEvent } from '../stream-event';
import { type Fields, isObject } from '../translation-checks';
import { anthropicUsageAsOpenAI } from './anthropic-usage';
import { finishReasonFromAnthropic } from './finish-reason';

/** The counts of a `usage` object that are there: a null count in message_delta means "not reported", not zero. */
function reportedCounts(usage: unknown): Record<string, number> {
  if (typeof usage !== 'object' || usage === null) return {};
  return Object.fromEntries(Object.entries(usage).filter(([, value]) => typeof value === 'number'));
}

/**
 * Anthropic's stream as OpenAI chunks. `message_start` opens the message (the role
 * chunk; input and cache counts), text and tool input arrive as block deltas,
 * `message_delta` carries the stop reason and the cumulative counts, `message_stop`
 * ends it (then the usage-only chunk). An `error` event is how Anthropic ends a stream
 * that failed once begun (overloaded): it ends the client's stream with that error.
 */
export class AnthropicChatStreamDecoder implements ChatStreamDecoder {
  private id = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private usage: Record<string, number> = {};
  /** Block index → tool call ordinal, for the blocks that are tool calls. */
  private readonly toolIndexes = new Map<number, number>();
  private complete = false;

  constructor(private model: string) {}

  onEvent(event: EventSourceMessage): ChatCompletionChunk[] {
    const data = parseStreamEvent(event.data, 'anthropic');
    switch (data.type) {
      case 'message_start':
        this.id = typeof data.message?.id === 'string' ? data.message.id : `msg_${Date.now().toString(36)}`;
        if (typeof data.message?.model === 'string') this.model = data.message.model;
        this.usage = reportedCounts(data.message?.usage);
        return [this.chunk({ role: 'assistant', content: '' })];
      case 'content_block_start':
        return this.blockStart(data.index, data.content_block);
      case 'content_block_delta':
        return this.blockDelta(data.index, data.delta);
      case 'message_delta':
        // Cumulative counts: output_tokens is the final output, input and cache counts (when sent) the final prompt.
        this.usage = { ...this.usage, ...reportedCounts(data.usage) };
        return [this.chunk({}, finishReasonFromAnthropic(data.delta?.stop_reason) ?? 'stop')];
      case 'message_stop':
        this.complete = true;
        return [{ ...this.envelope(), choices: [], usage: anthropicUsageAsOpenAI(this.usage) }];
      case 'error': {
        const type = typeof data.error?.type === 'string' ? data.error.type : 'api_error';
        const message = typeof data.error?.message === 'string' ? data.error.message : 'Provider anthropic ended the stream with an error';
        // 529 is Anthropic's own status for overloaded_error; the type becomes the logged error code.
        throw new GatewayError(type === 'overloaded_error' ? 529 : 502, 'upstream_error', message, type);
      }
      case 'ping':
      case 'content_block_stop':
        return [];
      default:
        if (typeof data.type !== 'string')
          throw GatewayError.upstreamMalformed(`Provider anthropic sent a stream event without a type: ${event.data.slice(0, 200)}`);
        return []; // event types added after this was written: Anthropic asks clients to ignore them
    }
  }

  isComplete(): boolean {
    return this.complete;
  }

  private blockStart(index: number, value: unknown): ChatCompletionChunk[] {
    const block: Fields = isObject(value) ? value : {};
    if (block.type === 'tool_use') {
      const ordinal = this.toolIndexes.size;
      this.toolIndexes.set(index, ordinal);
      // The block's `input` is always {} here: the arguments follow as input_json_delta fragments.
      // Anthropic names each tool_use block's id and name; they pass on as sent.
      return [
        this.chunk({ tool_calls: [{ index: ordinal, id: block.id as string, type: 'function', function: { name: block.name as string, arguments: '' } }] }),
      ];
    }
    if (block.type === 'text' && typeof block.text === 'string' && block.text) return [this.chunk({ content: block.text })];
    if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking) return [this.chunk({ reasoning_content: block.thinking })];
    return []; // redacted_thinking has no text to give
  }

  private blockDelta(index: number, value: unknown): ChatCompletionChunk[] {
    const delta: Fields = isObject(value) ? value : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string') return [this.chunk({ content: delta.text })];
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
      const ordinal = this.toolIndexes.get(index);
      if (ordinal === undefined) throw GatewayError.upstreamMalformed(`Provider anthropic sent tool input for block ${index}, which is not a tool call`);
      return [this.chunk({ tool_calls: [{ index: ordinal, function: { arguments: delta.partial_json } }] })];
    }
    // Thinking text as OpenAI-compatible reasoning providers stream it; the signature stays behind.
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking) return [this.chunk({ reasoning_content: delta.thinking })];
    return []; // signature_delta, citations_delta
  }

  private envelope() {
    return { id: this.id, object: 'chat.completion.chunk' as const, created: this.created, model: this.model };
  }

  private chunk(delta: ChatDelta, finishReason: ChatFinishReason | null = null): ChatCompletionChunk {
    return { ...this.envelope(), choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
  }
}
