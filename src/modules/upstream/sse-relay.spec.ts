import { PassThrough } from 'node:stream';
import type { EventSourceMessage } from 'eventsource-parser';
import { ClientClosedRequestError, GatewayError, type LoggedError } from '../../common/errors/gateway-error';
import type { AnswerOutcome } from '../../context/attempt';
import { relayUpstreamSse, type SseStreamHandler } from './sse-relay';
import type { UpstreamResponse } from './upstream-client';
import { Readiness } from '../health/readiness';

/** A chat-like handler: each event's data is a frame, `[DONE]` the end marker, `boom` an error event. */
class TestHandler implements SseStreamHandler {
  readonly texts: string[] = [];
  done = false;
  finished = 0;
  /** An error finish() reports (the provider's error event, as a real handler keeps it). */
  finishError: LoggedError | null = null;

  onEvent(event: EventSourceMessage): string[] {
    if (event.data === 'boom') throw new GatewayError(502, 'upstream_error', 'the provider sent an error event', 'upstream_error_event');
    if (event.data === '[DONE]') {
      this.done = true;
      return ['data: [DONE]\n\n'];
    }
    this.texts.push(event.data);
    return [`data: ${event.data}\n\n`];
  }

  isComplete(): boolean {
    return this.done;
  }

  errorFrame(error: LoggedError): string {
    return `event: error\ndata: ${error.code}\n\n`;
  }

  finish(): AnswerOutcome {
    this.finished++;
    return { responseBody: { text: this.texts.join('') }, usage: null, servedModel: 'test-model', error: this.finishError };
  }
}

function fakeResponse(): { response: UpstreamResponse; body: PassThrough; cleared: jest.Mock } {
  const body = new PassThrough();
  const cleared = jest.fn();
  const response = {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: body as unknown as UpstreamResponse['body'],
    clearTimeout: cleared,
    timedOut: () => false,
  };
  return { response, body, cleared };
}

const context = () => ({ abort: new AbortController() });
const event = (data: string) => `data: ${data}\n\n`;
/** Lets the stream's events and the promise callbacks run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled by now (either way). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await tick();
  return settled;
}

/** Subscribes and collects the frames; `done` resolves when the frames complete. */
function collect(frames: import('rxjs').Observable<string>) {
  const received: string[] = [];
  let complete!: () => void;
  const done = new Promise<void>((resolve) => (complete = resolve));
  const subscription = frames.subscribe({ next: (frame) => received.push(frame), complete: () => complete() });
  return { received, done, subscription };
}

describe('relayUpstreamSse', () => {
  it('resolves only at the first event, relays frames in order and settles the outcome at a clean end', async () => {
    const { response, body, cleared } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    expect(cleared).toHaveBeenCalled();

    body.write(': keep-alive comment\n\n');
    expect(await isSettled(relay)).toBe(false);

    body.write(event('Hel'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.write(event('lo'));
    body.end(event('[DONE]'));
    await client.done;

    expect(client.received).toEqual([event('Hel'), event('lo'), event('[DONE]')]);
    expect(await outcome).toEqual({ responseBody: { text: 'Hello' }, usage: null, servedModel: 'test-model', error: null });
    expect(handler.finished).toBe(1);
  });

  it('ends with the handler error frame and upstream_stream_incomplete when the provider stops before its end marker', async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('partial'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.end();
    await client.done;

    expect(client.received).toEqual([event('partial'), 'event: error\ndata: upstream_stream_incomplete\n\n']);
    const settled = await outcome;
    expect(settled.error?.code).toBe('upstream_stream_incomplete');
    expect(settled.responseBody).toEqual({ text: 'partial' });
  });

  it('rejects (and settles no outcome) when the body ends before any event, so a retry or fallback can take over', async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.end(': only a comment\n\n');

    await expect(relay).rejects.toMatchObject({ status: 502, code: 'upstream_unreachable' });
    expect(handler.finished).toBe(0);
  });

  it('destroys the body and settles client_closed_request when the client unsubscribes mid-stream', async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('half'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    await tick();
    client.subscription.unsubscribe();

    expect(body.destroyed).toBe(true);
    expect((await outcome).error?.code).toBe('client_closed_request');
    expect(handler.finished).toBe(1);
  });

  it('counts a client leaving after the end marker (before the provider closed) as a success', async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('all'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.write(event('[DONE]'));
    await tick();
    expect(client.received).toEqual([event('all'), event('[DONE]')]);
    client.subscription.unsubscribe();

    expect(body.destroyed).toBe(true);
    expect((await outcome).error).toBeNull();
  });

  it("keeps the error the handler's finish() reports over the stream's own", async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    handler.finishError = { type: 'upstream_error', code: 'provider_error_event', message: 'overloaded' };
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('x'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.end(); // incomplete: the stream's own error would be upstream_stream_incomplete
    await client.done;

    expect((await outcome).error).toEqual(handler.finishError);
  });

  it('ends with request_timeout when the provider goes silent for the idle timeout after the first event', async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 30, handler);
    body.write(event('first'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    await client.done; // no more bytes: the idle timer ends the stream

    expect(client.received).toEqual([event('first'), 'event: error\ndata: request_timeout\n\n']);
    expect((await outcome).error?.code).toBe('request_timeout');
    expect(body.destroyed).toBe(true);
  });

  it('rejects with a 504 when the provider is silent before its first event', async () => {
    const { response } = fakeResponse();
    const handler = new TestHandler();
    await expect(relayUpstreamSse(response, context(), 30, handler)).rejects.toMatchObject({ status: 504, code: 'request_timeout' });
    expect(handler.finished).toBe(0);
  });

  it("rejects with the handler's GatewayError when the first event is an error", async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('boom'));

    const error = await relay.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'upstream_error_event', status: 502 });
    expect(body.destroyed).toBe(true);
    expect(handler.finished).toBe(0);
  });

  it("ends the stream with the handler's error frame when a later event is an error", async () => {
    const { response, body } = fakeResponse();
    const handler = new TestHandler();
    const relay = relayUpstreamSse(response, context(), 1000, handler);
    body.write(event('ok'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.write(event('boom'));
    await client.done;

    expect(client.received).toEqual([event('ok'), 'event: error\ndata: upstream_error_event\n\n']);
    expect((await outcome).error?.code).toBe('upstream_error_event');
  });

  it('rejects with ClientClosedRequestError when the client left before the first event broke the body', async () => {
    const { response, body } = fakeResponse();
    const ctx = context();
    const relay = relayUpstreamSse(response, ctx, 1000, new TestHandler());
    ctx.abort.abort();
    body.destroy(Object.assign(new Error('aborted'), { code: 'UND_ERR_ABORTED' }));
    await expect(relay).rejects.toBeInstanceOf(ClientClosedRequestError);
  });

  it('ends with upstream_stream_broken when the body breaks off after the first event', async () => {
    const { response, body } = fakeResponse();
    const relay = relayUpstreamSse(response, context(), 1000, new TestHandler());
    body.write(event('a'));
    const { frames, outcome } = await relay;
    const client = collect(frames);
    body.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await client.done;
    expect(client.received).toEqual([event('a'), 'event: error\ndata: upstream_stream_broken\n\n']);
    expect((await outcome).error?.code).toBe('upstream_stream_broken');
  });

  it('replays the frames that arrived before the client subscribed', async () => {
    const { response, body } = fakeResponse();
    const relay = relayUpstreamSse(response, context(), 1000, new TestHandler());
    body.write(event('a'));
    const { frames } = await relay;
    body.end(event('b') + event('[DONE]'));
    await tick();
    const client = collect(frames);
    await client.done;
    expect(client.received).toEqual([event('a'), event('b'), event('[DONE]')]);
  });

  describe('a body destroyed without an error (an aborted attempt)', () => {
    it('before the first event: rejects (ClientClosedRequestError when the client left), so the attempt ends', async () => {
      const { response, body } = fakeResponse();
      const ctx = context();
      const relayed = relayUpstreamSse(response, ctx, 1000, new TestHandler());
      ctx.abort.abort();
      body.destroy();
      await expect(relayed).rejects.toBeInstanceOf(ClientClosedRequestError);
    });

    it('after the first event, with the client still there: ends the stream as broken', async () => {
      const { response, body } = fakeResponse();
      const handler = new TestHandler();
      const relayed = relayUpstreamSse(response, context(), 1000, handler);
      body.write(event('hello'));
      const { frames, outcome } = await relayed;
      const received: string[] = [];
      frames.subscribe((frame) => received.push(frame));
      body.destroy();
      expect((await outcome).error?.code).toBe('upstream_stream_broken');
      expect(received[received.length - 1]).toBe('event: error\ndata: upstream_stream_broken\n\n');
      expect(handler.finished).toBe(1);
    });
  });

  describe('the shutdown deadline', () => {
    it('ends an open stream with the shutting_down error event, aborting the provider, and settles its outcome', async () => {
      const { response, body } = fakeResponse();
      const handler = new TestHandler();
      const deadline = new Readiness();
      const relayed = relayUpstreamSse(response, context(), 1000, handler, deadline);
      body.write(event('partial'));
      const { frames, outcome } = await relayed;
      const client = collect(frames);
      deadline.reachDeadline();
      await client.done;

      expect(client.received).toEqual([event('partial'), 'event: error\ndata: shutting_down\n\n']);
      expect((await outcome).error).toMatchObject({ type: 'service_unavailable', code: 'shutting_down' });
      expect(body.destroyed).toBe(true);
      expect(handler.finished).toBe(1);
    });

    it('before the first event: rejects with a 503 shutting_down', async () => {
      const { response } = fakeResponse();
      const handler = new TestHandler();
      const deadline = new Readiness();
      const relayed = relayUpstreamSse(response, context(), 1000, handler, deadline);
      deadline.reachDeadline();
      await expect(relayed).rejects.toMatchObject({ status: 503, code: 'shutting_down' });
      expect(handler.finished).toBe(0);
    });

    it('a stream that ended before the deadline no longer listens to it', async () => {
      const { response, body } = fakeResponse();
      const deadline = new Readiness();
      const watching = () => (deadline as unknown as { atDeadline: Set<unknown> }).atDeadline.size;
      const relayed = relayUpstreamSse(response, context(), 1000, new TestHandler(), deadline);
      body.write(event('all'));
      const { frames, outcome } = await relayed;
      const client = collect(frames);
      body.end(event('[DONE]'));
      expect(watching()).toBe(1);
      await client.done;
      expect(watching()).toBe(0);
      deadline.reachDeadline();

      expect((await outcome).error).toBeNull();
      expect(client.received).toEqual([event('all'), event('[DONE]')]);
    });
  });

  describe('flow (a client behind)', () => {
    it('pause stops reading the body and its silence timer; resume reads on and re-arms it', async () => {
      const { response, body } = fakeResponse();
      const handler = new TestHandler();
      const relayed = relayUpstreamSse(response, context(), 40, handler);
      body.write(event('first'));
      const { frames, outcome, flow } = await relayed;
      const client = collect(frames);

      flow.pause();
      body.write(event('second'));
      await new Promise((resolve) => setTimeout(resolve, 100)); // past the 40 ms silence timeout
      expect(client.received).toEqual([event('first')]); // not read while paused
      expect(await isSettled(outcome)).toBe(false); // and no request_timeout

      flow.resume();
      await tick();
      expect(client.received).toEqual([event('first'), event('second')]);
      await client.done; // silent again, and no longer paused: the timer ends it
      expect((await outcome).error?.code).toBe('request_timeout');
    });

    it('the client leaving while paused still destroys the body and settles the outcome once', async () => {
      const { response, body } = fakeResponse();
      const handler = new TestHandler();
      const relayed = relayUpstreamSse(response, context(), 1000, handler);
      body.write(event('first'));
      const { frames, outcome, flow } = await relayed;
      const client = collect(frames);
      flow.pause();
      client.subscription.unsubscribe();
      flow.resume(); // after the end: nothing happens
      expect((await outcome).error?.code).toBe('client_closed_request');
      expect(body.destroyed).toBe(true);
      expect(handler.finished).toBe(1);
    });
  });
});
