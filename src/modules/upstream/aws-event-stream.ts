import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { EventSourceMessage } from 'eventsource-parser';

/** The content type of AWS's binary event stream (Bedrock's ConverseStream, InvokeModelWithResponseStream). */
export const AWS_EVENT_STREAM = 'application/vnd.amazon.eventstream';

/** Whether a provider's answer is an event stream the relay can read: SSE text, or AWS's binary frames. */
export function isEventStream(contentType: string): boolean {
  return contentType.includes('text/event-stream') || contentType.includes(AWS_EVENT_STREAM);
}

/**
 * AWS's binary event stream as events for an SseStreamHandler, one per frame, so that
 * a vendor's stream decoder reads Bedrock's frames as it reads SSE events:
 *
 * - an event frame (`:message-type: event`) is `{event: <:event-type>, data: <payload as text>}`;
 * - an exception frame (`:message-type: exception`, e.g. a throttle or a model error
 *   mid-stream) is `{event: "exception:<:exception-type>", data: <payload>}` (payload `{"message": …}`);
 * - an error frame (`:message-type: error`) is `{event: "error:<:error-code>", data: {"message": <:error-message>}}`.
 *
 * Frames are split by their length prelude and decoded by smithy's codec, which checks
 * both CRCs: a corrupt frame throws, and the relay ends the stream with an error event.
 */
export class AwsEventStreamReader {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private pending: Buffer = Buffer.alloc(0);

  /** The events of the complete frames in `bytes` (and what earlier calls left over). */
  feed(bytes: Buffer): EventSourceMessage[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, bytes]) : bytes;
    const events: EventSourceMessage[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      // The prelude (12 bytes) and the message CRC (4) are the least a frame holds.
      if (length < 16) throw new Error(`an event stream frame declares ${length} bytes`);
      if (this.pending.length < length) break;
      const frame = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      events.push(eventOf(this.codec.decode(frame)));
    }
    return events;
  }

  /** Bytes of a frame begun but not finished: at the end of the body that is a cut stream. */
  hasPartialFrame(): boolean {
    return this.pending.length > 0;
  }
}

function header(message: Message, name: string): string | undefined {
  const value = message.headers[name];
  return value && typeof value.value === 'string' ? value.value : undefined;
}

function eventOf(message: Message): EventSourceMessage {
  const data = toUtf8(message.body);
  const type = header(message, ':message-type') ?? 'event';
  if (type === 'exception') return { event: `exception:${header(message, ':exception-type') ?? 'unknown'}`, data, id: undefined };
  if (type === 'error') {
    const text = header(message, ':error-message') ?? data;
    return { event: `error:${header(message, ':error-code') ?? 'unknown'}`, data: JSON.stringify({ message: text }), id: undefined };
  }
  return { event: header(message, ':event-type') ?? '', data, id: undefined };
}
