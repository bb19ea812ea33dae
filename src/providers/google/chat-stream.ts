import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import { parseStreamEvent } from '../stream-event';
import type { ChatCompletionChunk, ChatDelta, ChatFinishReason, ChatStreamDecoder } from '../chat-format';
import { answerText, generatedId, logprobs, thoughtText, toolCalls } from './candidate';
import { finishReasonFromGemini } from './finish-reason';
import type { GeminiResponse, GeminiUsageMetadata } from './gemini-types';
import { usageFromGemini } from './gemini-usage';

/**
 * Gemini's stream as OpenAI chunks. Gemini has no start or end events: every event is
 * a partial GenerateContentResponse, a candidate's last one carries its `finishReason`,
 * and `usageMetadata` holds running totals, so the latest one is the bill. The stream
 * is complete when every candidate seen has finished; then the usage-only chunk
 * follows, as OpenAI sends it with `stream_options.include_usage`.
 */
export class GeminiChatStreamDecoder implements ChatStreamDecoder {
  private id: string | null = null;
  private readonly created = Math.floor(Date.now() / 1000);
  private usage: GeminiUsageMetadata | null = null;
  /** Choices that had their role chunk, with how many tool calls each has sent (the running `index`). */
  private readonly toolCallCounts = new Map<number, number>();
  private readonly finished = new Set<number>();
  private complete = false;

  constructor(private model: string) {}

  onEvent(event: EventSourceMessage): ChatCompletionChunk[] {
    const response = parseStreamEvent(event.data, 'google') as GeminiResponse & { error?: Record<string, unknown> };
    if (response.error) {
      const error = response.error;
      const message = typeof error.message === 'string' ? error.message : 'Provider google ended the stream with an error';
      throw new GatewayError(502, 'upstream_error', message, typeof error.status === 'string' ? error.status : null);
    }
    // Gemini sends nothing after the last finish; should it, that is not part of this answer.
    if (this.complete) return [];
    this.id ??= response.responseId ?? generatedId('chatcmpl-');
    if (typeof response.modelVersion === 'string') this.model = response.modelVersion;
    if (response.usageMetadata && typeof response.usageMetadata === 'object') this.usage = response.usageMetadata;

    const chunks: ChatCompletionChunk[] = [];
    const candidates = Array.isArray(response.candidates) ? response.candidates : [];
    if (!candidates.length && response.promptFeedback?.blockReason) {
      // A blocked prompt: no candidate will come, so the one choice ends here, filtered.
      this.start(0, chunks);
      chunks.push(this.chunk(0, {}, 'content_filter'));
      this.finished.add(0);
    }
    candidates.forEach((candidate, position) => {
      const index = candidate.index ?? position;
      this.start(index, chunks);
      const parts = Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];
      const reasoning = thoughtText(parts);
      if (reasoning) chunks.push(this.chunk(index, { reasoning_content: reasoning }));
      const text = answerText(parts);
      if (text) chunks.push(this.chunk(index, { content: text }, null, logprobs(candidate)));
      const calls = toolCalls(parts);
      if (calls.length) {
        const first = this.toolCallCounts.get(index)!;
        this.toolCallCounts.set(index, first + calls.length);
        chunks.push(this.chunk(index, { tool_calls: calls.map((call, offset) => ({ index: first + offset, ...call })) }));
      }
      if (candidate.finishReason && !this.finished.has(index)) {
        this.finished.add(index);
        chunks.push(this.chunk(index, {}, finishReasonFromGemini(candidate.finishReason, this.toolCallCounts.get(index)! > 0)));
      }
    });

    if (this.finished.size && [...this.toolCallCounts.keys()].every((index) => this.finished.has(index))) {
      this.complete = true;
      // Without usageMetadata there is no bill to report: zeros would log a free call.
      if (this.usage) chunks.push({ ...this.envelope(), choices: [], usage: usageFromGemini(this.usage) });
    }
    return chunks;
  }

  isComplete(): boolean {
    return this.complete;
  }

  /** OpenAI opens each choice with a role chunk; clients build the message from it. */
  private start(index: number, chunks: ChatCompletionChunk[]): void {
    if (this.toolCallCounts.has(index)) return;
    this.toolCallCounts.set(index, 0);
    chunks.push(this.chunk(index, { role: 'assistant', content: '' }));
  }

  private envelope() {
    // The id is set before the first chunk.
    return { id: this.id ?? '', object: 'chat.completion.chunk' as const, created: this.created, model: this.model };
  }

  private chunk(index: number, delta: ChatDelta, finishReason: ChatFinishReason | null = null, chunkLogprobs: unknown = null): ChatCompletionChunk {
    return { ...this.envelope(), choices: [{ index, delta, logprobs: chunkLogprobs, finish_reason: finishReason }] };
  }
}
