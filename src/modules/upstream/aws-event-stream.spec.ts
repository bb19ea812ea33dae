import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { AwsEventStreamReader } from './aws-event-stream';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
function frame(headers: Record<string, string>, payload: string): Buffer {
  const encoded: MessageHeaders = {};
  for (const [name, value] of Object.entries(headers)) encoded[name] = { type: 'string', value };
  return Buffer.from(codec.encode({ headers: encoded, body: fromUtf8(payload) }));
}

describe('AwsEventStreamReader', () => {
  const delta = frame({ ':message-type': 'event', ':event-type': 'contentBlockDelta' }, '{"delta":{"text":"Hé"}}');
  const stop = frame({ ':message-type': 'event', ':event-type': 'messageStop' }, '{"stopReason":"end_turn"}');

  it('gives one event per frame, whatever the network chunks split', () => {
    const bytes = Buffer.concat([delta, stop]);
    const reader = new AwsEventStreamReader();
    const events = [];
    // Byte by byte: a frame and a multi-byte character split everywhere.
    for (let i = 0; i < bytes.length; i++) events.push(...reader.feed(bytes.subarray(i, i + 1)));
    expect(events.map(({ event, data }) => ({ event, data }))).toEqual([
      { event: 'contentBlockDelta', data: '{"delta":{"text":"Hé"}}' },
      { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
    ]);
    expect(reader.hasPartialFrame()).toBe(false);
  });

  it('names exception and error frames so that decoders can end the stream with them', () => {
    const reader = new AwsEventStreamReader();
    const exception = frame({ ':message-type': 'exception', ':exception-type': 'throttlingException' }, '{"message":"slow down"}');
    const error = frame({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'broken' }, '');
    expect(reader.feed(Buffer.concat([exception, error])).map(({ event, data }) => ({ event, data }))).toEqual([
      { event: 'exception:throttlingException', data: '{"message":"slow down"}' },
      { event: 'error:InternalFailure', data: '{"message":"broken"}' },
    ]);
  });

  it('throws on a corrupt frame (its CRC does not match) and keeps a cut frame as partial', () => {
    const corrupt = Buffer.from(delta);
    corrupt[corrupt.length - 6] ^= 0xff;
    expect(() => new AwsEventStreamReader().feed(corrupt)).toThrow();
    const reader = new AwsEventStreamReader();
    expect(reader.feed(delta.subarray(0, 20))).toEqual([]);
    expect(reader.hasPartialFrame()).toBe(true);
  });

  it('refuses a frame declaring more than AWS allows, at its prelude, before buffering it', () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(0xffff_fff0, 0);
    expect(() => new AwsEventStreamReader().feed(prelude)).toThrow(/declares 4294967280 bytes, more than/);
  });

  it('joins a large frame trickled in small chunks once, not at every chunk', () => {
    const big = frame({ ':message-type': 'event', ':event-type': 'chunk' }, 'x'.repeat(8 * 1024 * 1024));
    const reader = new AwsEventStreamReader();
    // The bytes the reader copies joining chunks (counted, not timed: a loaded machine must not fail it).
    const concat = jest.spyOn(Buffer, 'concat');
    const events = [];
    let copied = 0;
    try {
      for (let i = 0; i < big.length; i += 1024) events.push(...reader.feed(big.subarray(i, i + 1024)));
      copied = concat.mock.calls.reduce((sum, [list, total]) => sum + (total ?? list.reduce((n, chunk) => n + chunk.length, 0)), 0);
    } finally {
      concat.mockRestore();
    }
    expect(events).toHaveLength(1);
    expect(events[0].data).toHaveLength(8 * 1024 * 1024);
    // Joined at every chunk, 8,192 chunks would copy about 34 GB; joined once, the frame's size.
    expect(copied).toBeGreaterThan(0);
    expect(copied).toBeLessThanOrEqual(big.length);
  });
});
