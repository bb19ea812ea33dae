import type { EventSourceMessage } from 'eventsource-parser';
import type { RequestContext } from '../../context/request-context';
import { GatewayError, type LoggedError } from '../../common/errors/gateway-error';
import type { AnswerOutcome } from '../../context/attempt';
import { sseFrame } from '../../common/http/sse-frame';
import { usageFromAnthropic } from '../../providers/anthropic/anthropic-usage';
import { parseStreamEvent } from '../../providers/stream-event';
import type { SseStreamHandler } from '../upstream/sse-relay';
import { anthropicErrorFrame } from '../../common/errors/anthropic-error';
import { AnthropicMessageAssembler } from './anthropic-message-assembler';

/**
 * An Anthropic stream relayed to an Anthropic client: every event is forwarded as it
 * came; the gateway reads them to assemble the message for the log (MCP blocks
 * included), its usage (input and cache counts from `message_start`, output from
 * `message_delta`) and time to first token. A malformed event ends the stream.
 * `unwrap` reads the Anthropic event out of a vendor's own frame (Bedrock's `chunk`s);
 * the client gets it as Anthropic's SSE event.
 */
export class AnthropicPassthroughStreamHandler implements SseStreamHandler {
  private readonly assembler = new AnthropicMessageAssembler();
  private complete = false;
  private ttftMs: number | null = null;
  private error: LoggedError | null = null;

  constructor(
    private readonly context: RequestContext,
    private readonly unwrap?: (event: EventSourceMessage) => EventSourceMessage | null,
  ) {}

  onEvent(received: EventSourceMessage): string[] {
    const event = this.unwrap ? this.unwrap(received) : received;
    if (!event) return [];
    const data = parseStreamEvent(event.data);
    if (typeof data.type !== 'string') throw GatewayError.upstreamMalformed(`The provider sent a stream event without a type: ${event.data.slice(0, 200)}`);
    if (data.type === 'message_stop') this.complete = true;
    if (data.type === 'error') {
      // Anthropic's own error event (e.g. overloaded) is its way to end a stream: forward it.
      this.complete = true;
      this.error ??= { type: 'upstream_error', code: data.error?.type ?? null, message: String(data.error?.message ?? 'The provider reported an error') };
    }
    if (this.assembler.add(data)) this.ttftMs ??= this.context.elapsedMs();
    return [sseFrame(event.data, event.event)];
  }

  isComplete(): boolean {
    return this.complete;
  }

  errorFrame(error: LoggedError): string {
    return anthropicErrorFrame(error);
  }

  finish(): AnswerOutcome {
    const message = this.assembler.message();
    const usage = usageFromAnthropic(message.usage as Record<string, unknown> | undefined);
    return { responseBody: message, usage, servedModel: typeof message.model === 'string' ? message.model : null, ttftMs: this.ttftMs, error: this.error };
  }
}
