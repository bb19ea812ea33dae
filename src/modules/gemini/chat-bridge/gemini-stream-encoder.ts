import type { LoggedError } from '../../../common/errors/gateway-error';
import { type ChatCompletionChunk, type ChatFinishReason, type ChatToolCall, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import type { ChatStreamDecoder } from '../../../providers/chat-format';
import type { RequestContext } from '../../../context/request-context';
import { ChatBridgeStreamHandler, type ChatChunkEncoder } from '../../chat/chat-bridge-stream-handler';
import { geminiErrorFrame, geminiFrame } from '../gemini-dialect';
import type { AnswerOutcome } from '../../../context/attempt';
import { chatCompletionToGemini, finishReasonToGemini, functionCallPart, usageMetadataFromOpenAI } from './chat-to-gemini';

/**
 * OpenAI chat completion chunks (first choice) written as Gemini's stream: every chunk of
 * text (and of reasoning, as a thought part, when the client asked for thoughts) is a
 * `GenerateContentResponse` of its own, as Gemini streams them; tool calls, which Gemini
 * sends whole, are held until the provider's stream ends and go, with the finish reason
 * and the usage, in the last chunk. `answer()` is the response the stream adds up to.
 */
export class GeminiStreamEncoder implements ChatChunkEncoder {
  private text = '';
  private thoughts = '';
  private readonly calls = new Map<number, ChatToolCall>();
  private finishReason: ChatFinishReason | null = null;
  private usage: ChatUsage | null = null;
  private id = '';
  private servedModel = '';

  constructor(
    private readonly model: string,
    private readonly includeThoughts: boolean,
  ) {}

  onChunk(chunk: ChatCompletionChunk): string[] {
    if (typeof chunk.id === 'string' && chunk.id) this.id ||= chunk.id;
    if (typeof chunk.model === 'string' && chunk.model) this.servedModel ||= chunk.model;
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return [];
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const held = this.calls.get(call.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
      if (call.id) held.id = call.id;
      if (call.function?.name) held.function.name += call.function.name;
      if (call.function?.arguments) held.function.arguments += call.function.arguments;
      this.calls.set(call.index, held);
    }
    const parts: Record<string, unknown>[] = [];
    const reasoning = reasoningText(delta);
    if (reasoning) {
      this.thoughts += reasoning;
      if (this.includeThoughts) parts.push({ text: reasoning, thought: true });
    }
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text !== 'string' || !text) continue;
      this.text += text;
      parts.push({ text });
    }
    return parts.length ? [geminiFrame(this.chunk(parts))] : [];
  }

  finish(): string[] {
    const calls = [...this.calls.values()].map(functionCallPart);
    const usageMetadata = usageMetadataFromOpenAI(this.usage);
    return [geminiFrame({ ...this.chunk(calls, finishReasonToGemini(this.finishReason)), ...(usageMetadata ? { usageMetadata } : {}) })];
  }

  private chunk(parts: Record<string, unknown>[], finishReason?: string): Record<string, unknown> {
    return {
      candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
      modelVersion: this.servedModel || this.model,
      ...(this.id ? { responseId: this.id } : {}),
    };
  }

  /** The response the stream adds up to, as a client would join it (for the log and the output guardrails). */
  answer(): Record<string, unknown> {
    const message = {
      role: 'assistant' as const,
      content: this.text,
      ...(this.includeThoughts && this.thoughts ? { reasoning_content: this.thoughts } : {}),
      ...(this.calls.size ? { tool_calls: [...this.calls.values()] } : {}),
    };
    return chatCompletionToGemini(
      {
        id: this.id,
        object: 'chat.completion',
        created: 0,
        model: this.servedModel || this.model,
        choices: [{ index: 0, message, finish_reason: this.finishReason }],
        usage: this.usage,
      },
      this.model,
    );
  }
}

/** A chat completion stream (any provider) written to a Gemini client (see ChatBridgeStreamHandler). */
export class ChatToGeminiStreamHandler extends ChatBridgeStreamHandler {
  private readonly gemini: GeminiStreamEncoder;

  constructor(context: RequestContext, decoder: ChatStreamDecoder, model: string, includeThoughts: boolean) {
    const encoder = new GeminiStreamEncoder(model, includeThoughts);
    super(context, decoder, encoder);
    this.gemini = encoder;
  }

  errorFrame(error: LoggedError): string {
    return geminiErrorFrame(error);
  }

  override finish(): AnswerOutcome {
    const outcome = super.finish();
    const served = (outcome.responseBody as Record<string, unknown>).modelVersion;
    return { ...outcome, servedModel: typeof served === 'string' ? served : null };
  }

  protected assembled(): Record<string, unknown> {
    return this.gemini.answer();
  }
}
