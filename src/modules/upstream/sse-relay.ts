import { StringDecoder } from 'node:string_decoder';
import { createParser, EventSourceMessage } from 'eventsource-parser';
import { Observable, Subscriber } from 'rxjs';
import type { RequestContext } from '../../context/request-context';
import { ClientClosedRequestError, GatewayError, type LoggedError } from '../../common/errors/gateway-error';
import type { StreamFlow } from '../../common/http/client-stream';
import type { AnswerOutcome } from '../../context/attempt';
import { AWS_EVENT_STREAM, AwsEventStreamReader } from './aws-event-stream';
import type { UpstreamResponse } from './upstream-client';
import type { ShutdownDeadline } from '../health/readiness';

/** What an operation does with a provider's event stream (chat, responses, messages …). */
export interface SseStreamHandler {
  /**
   * The frames to send the client for one upstream event; none drops it. Throws a
   * GatewayError for an event that ends the stream (malformed, or the provider's error).
   */
  onEvent(event: EventSourceMessage): string[];
  /** Whether the stream reached its proper end (e.g. `[DONE]`): an end before it is an error. */
  isComplete(): boolean;
  /** An error event in the operation's format, sent when the stream fails after it started. */
  errorFrame(error: LoggedError): string;
  /**
   * Called once however the stream ends: the assembled answer, its usage, the time to
   * first token, and an error an event carried (the provider's error event).
   */
  finish(): AnswerOutcome;
}

/** A relayed stream: the frames for the client, its outcome once it has ended, and how the edge slows it. */
export interface RelayedStream {
  frames: Observable<string>;
  outcome: Promise<AnswerOutcome>;
  /** Pauses the reading of the provider's body while the client is behind (see ClientStreamWriter). */
  flow: StreamFlow;
}

/**
 * Relays a provider's SSE body event by event (or AWS's binary event stream, frame by
 * frame, when the answer is `application/vnd.amazon.eventstream`: see aws-event-stream.ts;
 * the handler sees the same events either way). Resolves once the first event has
 * arrived, and rejects if the stream ends, breaks or stays silent before it: until
 * then nothing has reached the client, so a retry or a fallback can still take over.
 * After that, failures end the stream with an error event. However it ends, the stream's
 * outcome (the handler's, with the first error: an event's, else the stream's own) is
 * settled once. Unsubscribing (the client left) destroys the upstream body, aborting the request.
 * `flow.pause()` stops reading the body (the provider's writes then block on TCP's or
 * HTTP/2's flow control) and the silence timer with it, until `flow.resume()`.
 * `shutdownDeadline` passing (the instance's shutdown grace period is over) ends the
 * stream like a failure: the error event `shutting_down`, then the end of the response.
 */
export function relayUpstreamSse(
  response: UpstreamResponse,
  context: Pick<RequestContext, 'abort'>,
  idleTimeoutMs: number,
  handler: SseStreamHandler,
  shutdownDeadline?: ShutdownDeadline,
): Promise<RelayedStream> {
  response.clearTimeout(); // from here the idle timeout between events applies
  const body = response.body;
  let settleOutcome!: (outcome: AnswerOutcome) => void;
  const outcome = new Promise<AnswerOutcome>((resolve) => (settleOutcome = resolve));
  /** The outcome, once: the handler's answer, the first error (an event's before the stream's). */
  const finish = (streamError: LoggedError | null) => {
    const answer = handler.finish();
    settleOutcome({ ...answer, error: answer.error ?? streamError });
  };

  return new Promise((resolve, reject) => {
    let subscriber: Subscriber<string> | null = null;
    const backlog: string[] = [];
    let started = false;
    let ended = false;
    let idle: NodeJS.Timeout | undefined;
    let paused = false;
    let stopWatchingDeadline: () => void = () => undefined;

    const emit = (frame: string) => (subscriber ? subscriber.next(frame) : backlog.push(frame));
    const frames = new Observable<string>((sub) => {
      subscriber = sub;
      for (const frame of backlog.splice(0)) sub.next(frame);
      if (ended) sub.complete();
      return () => {
        if (ended) return;
        ended = true;
        clearTimeout(idle);
        stopWatchingDeadline();
        // A client may hang up as soon as it has the stream's last event (Codex does after
        // `response.completed`, before the provider closes): it read to the end, a success.
        const clientLeft: LoggedError | null = handler.isComplete()
          ? null
          : { type: 'client_error', code: 'client_closed_request', message: 'The client closed the connection mid-stream' };
        body.destroy();
        finish(clientLeft);
      };
    });

    /** The end of the stream, clean (failure null) or not. */
    const settle = (failure: LoggedError | null, beforeStart: () => Error) => {
      if (ended) return;
      ended = true;
      clearTimeout(idle);
      stopWatchingDeadline();
      body.destroy(); // a silent provider is aborted; after a clean end this is a no-op
      if (!started) {
        reject(beforeStart());
        return;
      }
      if (failure) emit(handler.errorFrame(failure));
      finish(failure);
      subscriber?.complete();
    };

    const onEvent = (event: EventSourceMessage) => {
      if (ended) return;
      let eventFrames: string[];
      try {
        eventFrames = handler.onEvent(event);
      } catch (error) {
        // A malformed or error event: the stream cannot go on, so it ends (or, before it
        // started, fails so that a retry or a fallback can take over).
        const failure = asGatewayError(error);
        settle({ type: failure.type, code: failure.code, message: failure.message }, () => failure);
        return;
      }
      for (const frame of eventFrames) emit(frame);
      if (!started) {
        started = true;
        resolve({ frames, outcome, flow });
      }
    };
    // A provider is not silent while the gateway does not read it: no idle timer while paused.
    const flow: StreamFlow = {
      pause: () => {
        if (ended || paused) return;
        paused = true;
        clearTimeout(idle);
        body.pause();
      },
      resume: () => {
        if (ended || !paused) return;
        paused = false;
        armIdleTimer();
        body.resume();
      },
    };
    const feed = bytesReader(String(response.headers['content-type'] ?? ''), onEvent);

    const armIdleTimer = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        const message = `The provider stream went silent for ${idleTimeoutMs} ms`;
        settle({ type: 'timeout_error', code: 'request_timeout', message }, () => GatewayError.upstreamTimeout(idleTimeoutMs));
      }, idleTimeoutMs);
    };
    armIdleTimer();

    const onShutdownDeadline = () => {
      const failure = GatewayError.shuttingDown('The gateway instance shut down before the stream ended (its shutdown grace period is over)');
      settle({ type: failure.type, code: failure.code, message: failure.message }, () => failure);
    };
    stopWatchingDeadline = shutdownDeadline?.onDeadline(onShutdownDeadline) ?? stopWatchingDeadline;

    body.on('data', (bytes: Buffer) => {
      armIdleTimer();
      try {
        feed(bytes);
      } catch (error) {
        const failure = GatewayError.upstreamMalformed(`The provider stream could not be read (${error instanceof Error ? error.message : String(error)})`);
        settle({ type: failure.type, code: failure.code, message: failure.message }, () => failure);
      }
    });
    body.on('close', () => {
      clearTimeout(idle);
      // After 'end' or 'error' this is the last event. Without them, the body was destroyed
      // quietly (an aborted attempt): it must still end the relay, or the attempt never ends.
      if (ended) return;
      const clientLeft = context.abort.signal.aborted && !response.timedOut();
      if (clientLeft && started) return; // the client's unsubscribe ends it
      const failure = { type: 'upstream_error', code: 'upstream_stream_broken', message: 'The provider stream closed before its end' };
      settle(failure, () =>
        clientLeft ? new ClientClosedRequestError() : GatewayError.upstreamUnreachable('The provider stream closed before its first event'),
      );
    });
    body.on('end', () => {
      const failure = handler.isComplete()
        ? null
        : { type: 'upstream_error', code: 'upstream_stream_incomplete', message: 'The provider stream ended before its end marker' };
      settle(failure, () => GatewayError.upstreamUnreachable('The provider stream ended before its first event'));
    });
    body.on('error', (error: Error & { code?: string }) => {
      const clientLeft = context.abort.signal.aborted && !response.timedOut();
      if (clientLeft && !started) {
        settle(null, () => new ClientClosedRequestError());
        return;
      }
      if (ended || clientLeft) return;
      const failure =
        error.code === 'UND_ERR_BODY_TIMEOUT'
          ? { type: 'timeout_error', code: 'request_timeout', message: 'The provider stream went silent' }
          : { type: 'upstream_error', code: 'upstream_stream_broken', message: `The provider stream broke off (${error.code ?? error.message})` };
      settle(failure, () => GatewayError.upstreamUnreachable(`The provider stream broke off before its first event (${error.code ?? error.message})`));
    });
  });
}

/** The largest SSE event the relay buffers (a streamed image's base64 is a few MiB). */
const MAX_EVENT_CHARS = 32 * 1024 * 1024;

/** What turns the body's bytes into events: AWS's binary frames, else SSE text. Throws on bytes that cannot be frames. */
function bytesReader(contentType: string, onEvent: (event: EventSourceMessage) => void): (bytes: Buffer) => void {
  if (contentType.includes(AWS_EVENT_STREAM)) {
    const reader = new AwsEventStreamReader();
    return (bytes) => {
      for (const event of reader.feed(bytes)) onEvent(event);
    };
  }
  // One event (or a line without its end) past the limit stops the stream with a 502 rather
  // than buffering whatever a provider, or a custom host, keeps sending; other parse errors
  // (an unknown field, a bad `retry`) are ignored, as the SSE standard says.
  const parser = createParser({
    onEvent,
    maxBufferSize: MAX_EVENT_CHARS,
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') throw new Error(`an event is larger than ${MAX_EVENT_CHARS} characters`);
    },
  });
  const decoder = new StringDecoder('utf8'); // a character may span two network chunks
  return (bytes) => parser.feed(decoder.write(bytes));
}

function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return GatewayError.upstreamMalformed(`The provider stream could not be read (${error instanceof Error ? error.message : String(error)})`);
}
