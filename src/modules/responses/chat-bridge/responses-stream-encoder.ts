import { sseFrame } from '../../../common/http/sse-frame';
import { type ChatCompletionChunk, type ChatDelta, type ChatToolCallDelta, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import type { Fields } from '../../../providers/translation-checks';
import type { NamespacedName } from './responses-to-chat';
import {
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type OutputPart,
  type ReasoningItem,
  type ResponseObject,
  functionCallItem,
  newItemId,
  responseObject,
  responseStatus,
  responseUsage,
} from './chat-to-response';

type Frames = string[];

/** The output item being streamed: its place in `output`, and what its later deltas must match. */
type OpenItem =
  | { kind: 'reasoning'; index: number; item: ReasoningItem }
  | { kind: 'message'; index: number; item: MessageItem; part: OutputPart }
  | { kind: 'function_call'; index: number; item: FunctionCallItem; toolIndex: number };

const emptyPart = (kind: OutputPart['type']): OutputPart =>
  kind === 'refusal' ? { type: 'refusal', refusal: '' } : { type: 'output_text', annotations: [], logprobs: [], text: '' };

/**
 * OpenAI chat completion chunks (first choice) written as the Responses API's typed
 * event stream, event for event as OpenAI sends it, each with its `sequence_number`:
 * `response.created` and `response.in_progress` with the first chunk; per output item
 * `response.output_item.added`, its events and `response.output_item.done`: reasoning
 * text (`reasoning_content` of the providers that send it) as a reasoning summary
 * (`reasoning_summary_part.*`, `reasoning_summary_text.*`), the answer as a message
 * (`content_part.added`, `output_text.delta` …, `output_text.done`, `content_part.done`;
 * a refusal as `refusal.delta` / `refusal.done`), each tool call as a function_call
 * (`function_call_arguments.delta` with each fragment as it came, then `.done`);
 * `finish()` closes the open item and ends with `response.completed` (or
 * `response.incomplete` at the output limit), which carries the whole response and its
 * usage. `response()` is the response the events so far amount to, for the log.
 */
export class ResponsesStreamEncoder {
  private readonly id = newItemId('resp_');
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private started = false;
  private finished = false;
  /** When `finish()` closed the response: the log's copy says the same time as the client's. */
  private completedAt: number | null = null;
  private readonly output: OutputItem[] = [];
  private open: OpenItem | null = null;
  private finishReason: unknown = null;
  private usage: ChatUsage | null = null;

  /** `settings`: the request as the response echoes it (`responseSettings`); `model` the one the request named, until a chunk says. */
  constructor(
    private readonly settings: Fields,
    private model: string,
    private readonly namespaced: Map<string, NamespacedName> = new Map(),
  ) {}

  onChunk(chunk: ChatCompletionChunk): Frames {
    if (this.finished) return [];
    const frames = this.start(chunk);
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice || typeof choice !== 'object') return frames;
    const delta: ChatDelta = choice.delta && typeof choice.delta === 'object' ? choice.delta : {};
    const reasoning = reasoningText(delta);
    if (reasoning) this.reasoningDelta(reasoning, frames);
    if (typeof delta.content === 'string' && delta.content) this.textDelta(delta.content, false, frames);
    if (typeof delta.refusal === 'string' && delta.refusal) this.textDelta(delta.refusal, true, frames);
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) if (call && typeof call === 'object') this.toolCallDelta(call, frames);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return frames;
  }

  /** The closing events, once the provider's stream is complete; `response.created` first if no chunk came. */
  finish(): Frames {
    if (this.finished) return [];
    const frames = [...this.start(null), ...this.closeItem()];
    this.finished = true;
    this.completedAt = Math.floor(Date.now() / 1000);
    const response = this.response();
    frames.push(this.emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response }));
    return frames;
  }

  /** The response the events so far amount to: final after `finish()`, in progress before (a stream cut short). */
  response(): ResponseObject {
    if (!this.finished) return responseObject(this.id, this.createdAt, this.model, this.settings, { output: this.output, usage: responseUsage(this.usage) });
    const { status, incomplete_details } = responseStatus(this.finishReason);
    return responseObject(this.id, this.createdAt, this.model, this.settings, {
      status,
      incomplete_details,
      completed_at: status === 'completed' ? this.completedAt : null,
      output: this.output,
      usage: responseUsage(this.usage),
    });
  }

  /** The sequence number the next event gets (an error event after the last one the client saw). */
  nextSequence(): number {
    return this.sequence;
  }

  private start(chunk: ChatCompletionChunk | null): Frames {
    if (this.started) return [];
    this.started = true;
    if (typeof chunk?.model === 'string' && chunk.model) this.model = chunk.model;
    const response = responseObject(this.id, this.createdAt, this.model, this.settings, {});
    return [this.emit('response.created', { response }), this.emit('response.in_progress', { response })];
  }

  private reasoningDelta(text: string, frames: Frames): void {
    let open = this.open;
    if (open?.kind !== 'reasoning') {
      const item: ReasoningItem = { id: newItemId('rs_'), type: 'reasoning', summary: [] };
      open = this.openItem({ kind: 'reasoning', index: this.output.length, item }, frames);
      const part = { type: 'summary_text' as const, text: '' };
      frames.push(this.emit('response.reasoning_summary_part.added', { ...this.at(open), summary_index: 0, part }));
      item.summary.push(part);
    }
    open.item.summary[0].text += text;
    frames.push(this.emit('response.reasoning_summary_text.delta', { ...this.at(open), summary_index: 0, delta: text }));
  }

  /** Text or refusal text into the open message (one part per run of either), opening one after another item. */
  private textDelta(text: string, refusal: boolean, frames: Frames): void {
    const kind = refusal ? 'refusal' : 'output_text';
    let open = this.open;
    if (open?.kind !== 'message') {
      const item: MessageItem = { id: newItemId('msg_'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      open = this.openItem({ kind: 'message', index: this.output.length, item, part: emptyPart(kind) }, frames);
      this.openPart(open, frames);
    } else if (open.part.type !== kind) {
      frames.push(...this.closePart(open));
      open.part = emptyPart(kind);
      this.openPart(open, frames);
    }
    const at = { ...this.at(open), content_index: open.item.content.length - 1 };
    if (open.part.type === 'refusal') {
      open.part.refusal += text;
      frames.push(this.emit('response.refusal.delta', { ...at, delta: text }));
    } else {
      open.part.text += text;
      frames.push(this.emit('response.output_text.delta', { ...at, delta: text, logprobs: [] }));
    }
  }

  /**
   * A tool call fragment. OpenAI names a call (id, function name) in its first delta and
   * sends only its `index` with the argument fragments after; a new index, or a new id
   * from a server that leaves `index` out, is a new call.
   */
  private toolCallDelta(call: ChatToolCallDelta, frames: Frames): void {
    const current = this.open?.kind === 'function_call' ? this.open : null;
    const ordinal = typeof call.index === 'number' ? call.index : (current?.toolIndex ?? 0);
    const id = typeof call.id === 'string' && call.id ? call.id : null;
    let open: OpenItem;
    if (current && current.toolIndex === ordinal && (id === null || id === current.item.call_id)) open = current;
    else {
      const name = typeof call.function?.name === 'string' ? call.function.name : '';
      const item = functionCallItem(newItemId('fc_'), id ?? newItemId('call_'), name, '', this.namespaced, 'in_progress');
      open = this.openItem({ kind: 'function_call', index: this.output.length, item, toolIndex: ordinal }, frames);
    }
    const fragment = call.function?.arguments;
    if (typeof fragment === 'string' && fragment) {
      open.item.arguments += fragment;
      frames.push(this.emit('response.function_call_arguments.delta', { ...this.at(open), delta: fragment }));
    }
  }

  private openItem<T extends OpenItem>(open: T, frames: Frames): T {
    frames.push(...this.closeItem());
    this.open = open;
    this.output.push(open.item);
    frames.push(this.emit('response.output_item.added', { output_index: open.index, item: open.item }));
    return open;
  }

  /** Adds the open message's part, just made, to its content. */
  private openPart(open: Extract<OpenItem, { kind: 'message' }>, frames: Frames): void {
    open.item.content.push(open.part);
    frames.push(this.emit('response.content_part.added', { ...this.at(open), content_index: open.item.content.length - 1, part: open.part }));
  }

  private closePart(open: Extract<OpenItem, { kind: 'message' }>): Frames {
    const at = { ...this.at(open), content_index: open.item.content.length - 1 };
    const done =
      open.part.type === 'refusal'
        ? this.emit('response.refusal.done', { ...at, refusal: open.part.refusal })
        : this.emit('response.output_text.done', { ...at, text: open.part.text, logprobs: [] });
    return [done, this.emit('response.content_part.done', { ...at, part: open.part })];
  }

  /** The events that close the open item; a message cut by the output limit is `incomplete`. */
  private closeItem(): Frames {
    const open = this.open;
    if (!open) return [];
    this.open = null;
    const frames: Frames = [];
    if (open.kind === 'reasoning') {
      const part = open.item.summary[0];
      frames.push(this.emit('response.reasoning_summary_text.done', { ...this.at(open), summary_index: 0, text: part.text }));
      frames.push(this.emit('response.reasoning_summary_part.done', { ...this.at(open), summary_index: 0, part }));
    } else if (open.kind === 'message') {
      frames.push(...this.closePart(open));
      open.item.status = responseStatus(this.finishReason).status;
    } else {
      frames.push(this.emit('response.function_call_arguments.done', { ...this.at(open), name: open.item.name, arguments: open.item.arguments }));
      open.item.status = 'completed';
    }
    frames.push(this.emit('response.output_item.done', { output_index: open.index, item: open.item }));
    return frames;
  }

  private at(open: OpenItem): { item_id: string; output_index: number } {
    return { item_id: open.item.id, output_index: open.index };
  }

  /** One event, serialised now: the items it shows keep changing after. */
  private emit(type: string, fields: Fields): string {
    return sseFrame(JSON.stringify({ type, sequence_number: this.sequence++, ...fields }), type);
  }
}
