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
 * AWS limits an event stream message to 16 MiB of payload and 128 KiB of headers; a frame
 * declaring more is refused rather than buffered.
 */
const MAX_FRAME_BYTES = 16 * 1024 * 1024 + 128 * 1024 + 16;

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
 * The stream is the provider's (or, through a custom host, anyone's): a frame may not
 * declare more than MAX_FRAME_BYTES, and a frame's chunks are joined once it is whole, so
 * neither a huge prelude nor a frame trickled in small chunks costs more than its size.
 */
export class AwsEventStreamReader {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  /** The bytes of frames not yet whole, as they came. */
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** The events of the complete frames in `bytes` (and what earlier calls left over). */
  feed(bytes: Buffer): EventSourceMessage[] {
    if (bytes.length) {
      this.chunks.push(bytes);
      this.buffered += bytes.length;
    }
    const events: EventSourceMessage[] = [];
    while (this.buffered >= 4) {
      const length = this.head(4).readUInt32BE(0);
      // The prelude (12 bytes) and the message CRC (4) are the least a frame holds.
      if (length < 16) throw new Error(`an event stream frame declares ${length} bytes`);
      if (length > MAX_FRAME_BYTES) throw new Error(`an event stream frame declares ${length} bytes, more than the ${MAX_FRAME_BYTES} allowed`);
      if (this.buffered < length) break;
      const pending = this.head(this.buffered);
      const rest = pending.subarray(length);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      events.push(eventOf(this.codec.decode(pending.subarray(0, length))));
    }
    return events;
  }

  /** Bytes of a frame begun but not finished: at the end of the body that is a cut stream. */
  hasPartialFrame(): boolean {
    return this.buffered > 0;
  }

  /** The buffered bytes from the start, at least `bytes` of them in one buffer (joining the chunks only when needed). */
  private head(bytes: number): Buffer {
    if (this.chunks[0].length < bytes) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0];
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
