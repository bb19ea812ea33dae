import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatCompletionChunk, ChatDelta, ChatFinishReason, ChatStreamDecoder } from '../chat-format';
import { parseStreamEvent } from '../stream-event';
import { awsErrorName, converseUsageAsOpenAI, finishReasonFromConverse, generatedId, toOpenAIError } from './converse-response';

/**
 * ConverseStream's events (one binary frame each, read by the relay's AWS event-stream
 * reader: `event` is the frame's `:event-type`) as OpenAI chunks:
 * `messageStart` opens the choice, `contentBlockStart` announces a tool call (id and
 * name), `contentBlockDelta` carries text, a tool call's input JSON piece by piece, or
 * reasoning text, `messageStop` the stop reason, and `metadata` the usage, which comes
 * last: the stream is complete then. An exception frame (a throttle, a model error
 * mid-stream) throws, so the client's stream ends with an error event, never a clean end.
 */
export class ConverseChatStreamDecoder implements ChatStreamDecoder {
  private readonly id = generatedId();
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private stopped = false;
  private complete = false;
  /** Content block index → the OpenAI index of the tool call it carries. */
  private readonly toolCalls = new Map<number, number>();

  constructor(private readonly model: string) {}

  onEvent(event: EventSourceMessage): ChatCompletionChunk[] {
    const type = event.event ?? '';
    if (type.startsWith('exception:') || type.startsWith('error:')) throw converseStreamError(type, event.data);
    const payload = parseStreamEvent(event.data, 'bedrock');
    if (this.complete) return [];
    const chunks: ChatCompletionChunk[] = [];
    switch (type) {
      case 'messageStart':
        this.start(chunks);
        break;
      case 'contentBlockStart': {
        const toolUse = payload.start?.toolUse;
        if (!toolUse) break;
        this.start(chunks);
        const index = this.toolCalls.size;
        this.toolCalls.set(Number(payload.contentBlockIndex), index);
        chunks.push(
          this.chunk({ tool_calls: [{ index, id: String(toolUse.toolUseId), type: 'function', function: { name: String(toolUse.name), arguments: '' } }] }),
        );
        break;
      }
      case 'contentBlockDelta': {
        this.start(chunks);
        const delta = payload.delta ?? {};
        if (typeof delta.text === 'string') chunks.push(this.chunk({ content: delta.text }));
        else if (typeof delta.toolUse?.input === 'string') {
          const index = this.toolCalls.get(Number(payload.contentBlockIndex));
          if (index === undefined) throw GatewayError.upstreamMalformed('Provider bedrock sent tool input for a block that did not start a tool call');
          chunks.push(this.chunk({ tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] }));
        } else if (typeof delta.reasoningContent?.text === 'string') chunks.push(this.chunk({ reasoning_content: delta.reasoningContent.text }));
        break;
      }
      case 'messageStop':
        this.start(chunks);
        this.stopped = true;
        chunks.push(this.chunk({}, finishReasonFromConverse(payload.stopReason)));
        break;
      case 'metadata':
        // Usage follows the stop; a metadata event before it is not the end of the answer.
        if (!this.stopped) break;
        this.complete = true;
        if (payload.usage && typeof payload.usage === 'object') chunks.push({ ...this.envelope(), choices: [], usage: converseUsageAsOpenAI(payload.usage) });
        break;
      default:
        // contentBlockStop, and event types added later, carry nothing a chat chunk holds.
        break;
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
    return { id: this.id, object: 'chat.completion.chunk' as const, created: this.created, model: this.model };
  }

  private chunk(delta: ChatDelta, finishReason: ChatFinishReason | null = null): ChatCompletionChunk {
    return { ...this.envelope(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
  }
}

/**
 * An exception frame (ConverseStream's, InvokeModelWithResponseStream's) as the error that ends the stream: the status AWS gives the same
 * error as an HTTP answer (a throttle is a 429), the message as toOpenAIError words it.
 */
export function converseStreamError(type: string, data: string): GatewayError {
  const name = awsErrorName(type.slice(type.indexOf(':') + 1));
  let body: unknown = data;
  try {
    body = JSON.parse(data);
  } catch {
    // not JSON: the text is the message
  }
  const status = name && Object.hasOwn(STREAM_ERROR_STATUS, name) ? STREAM_ERROR_STATUS[name] : 502;
  const { error } = toOpenAIError(status, body, name ? { 'x-amzn-errortype': name } : undefined);
  return new GatewayError(status, error.type, error.message, name);
}

const STREAM_ERROR_STATUS: Record<string, number> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  ValidationException: 400,
  ModelStreamErrorException: 424,
  InternalServerException: 500,
  ModelTimeoutException: 408,
};
