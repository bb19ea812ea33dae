import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { ClientStreamWriter, type StreamFlow } from './client-stream';

/** A response whose client reads only when told: `take()` lets one pending write complete. */
function slowClient(highWaterMark = 4) {
  const received: string[] = [];
  const pending: Array<() => void> = [];
  const res = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      pending.push(() => {
        received.push(chunk);
        done();
      });
    },
  });
  let ended = false;
  res.on('finish', () => (ended = true));
  const take = (count = Infinity) => {
    for (let i = 0; i < count && pending.length; i++) pending.shift()!();
  };
  return { res: res as unknown as ServerResponse, received, take, ended: () => ended };
}

function flowSpy(): StreamFlow & { paused: boolean; pauses: number } {
  const flow = {
    paused: false,
    pauses: 0,
    pause: () => {
      flow.paused = true;
      flow.pauses++;
    },
    resume: () => (flow.paused = false),
  };
  return flow;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ClientStreamWriter', () => {
  it('pauses the source once bufferBytes are unread, holds what still comes, and resumes in order once the client has read it', async () => {
    const client = slowClient();
    const flow = flowSpy();
    const writer = new ClientStreamWriter(client.res, flow, { bufferBytes: 10, idleMs: 60_000 }, () => undefined);
    for (const chunk of ['aaaa', 'bbbb']) writer.write(chunk); // 8 unread: behind, not yet past the buffer
    expect(flow.paused).toBe(false);
    writer.write('cccc'); // 12 unread
    expect(flow.paused).toBe(true);
    writer.write('dddd'); // held, not written
    expect(client.res.writableLength).toBe(12);

    client.take();
    await tick();
    client.take();
    await tick();
    expect(client.received).toEqual(['aaaa', 'bbbb', 'cccc', 'dddd']);
    expect(flow.paused).toBe(false);
    expect(flow.pauses).toBe(1);
  });

  it('ends the response only after what it held has been written', async () => {
    const client = slowClient();
    const writer = new ClientStreamWriter(client.res, flowSpy(), { bufferBytes: 4, idleMs: 60_000 }, () => undefined);
    writer.write('aaaa');
    writer.write('bbbb'); // held
    writer.end();
    await tick();
    expect(client.ended()).toBe(false);
    client.take();
    await tick();
    client.take();
    await tick();
    expect(client.received).toEqual(['aaaa', 'bbbb']);
    expect(client.ended()).toBe(true);
  });

  it('calls onIdle once when a client that is behind reads nothing for idleMs', async () => {
    const client = slowClient();
    const onIdle = jest.fn();
    const writer = new ClientStreamWriter(client.res, flowSpy(), { bufferBytes: 100, idleMs: 30 }, onIdle);
    writer.write('aaaa');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it('does not call onIdle while the client reads, however slowly, nor once it has caught up', async () => {
    const client = slowClient(1);
    const onIdle = jest.fn();
    const writer = new ClientStreamWriter(client.res, flowSpy(), { bufferBytes: 100, idleMs: 40 }, onIdle);
    for (let i = 0; i < 8; i++) writer.write('aaaa');
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      client.take(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // caught up: nothing is waited on
    expect(client.received).toHaveLength(8);
    expect(onIdle).not.toHaveBeenCalled();
  });
});
