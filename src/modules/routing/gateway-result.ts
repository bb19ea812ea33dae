import type { Response } from 'express';
import type { Readable } from 'node:stream';
import type { Observable } from 'rxjs';
import { ClientClosedRequestError } from '../../common/errors/gateway-error';
import { ClientStreamWriter, clientStreamLimitsOf, pipeToClient, type StreamFlow } from '../../common/http/client-stream';
import type { RequestContext } from '../../context/request-context';
import type { AnswerOutcome } from '../../context/attempt';

/**
 * What an operation service hands back to its controller: a JSON body (the provider's
 * bytes, passed through), a stream of ready-made SSE frames, or a binary body (audio)
 * streamed from the provider to the client as it comes; each with what the answer taught
 * the gateway (a stream's and a binary body's once they have ended). A stream read from a
 * provider carries its `flow`, which the edge pauses while the client is behind; frames
 * already in memory (a cache hit, a tool loop's last round) need none.
 */
export type GatewayResult =
  | { kind: 'json'; status: number; body: Buffer; outcome: AnswerOutcome }
  | { kind: 'sse'; status: number; frames: Observable<string>; outcome: Promise<AnswerOutcome>; flow?: StreamFlow; contentType?: string }
  | { kind: 'binary'; status: number; contentType: string; body: Readable; outcome: Promise<AnswerOutcome> };

/** The response headers of CONTRACT section 2 that depend on how the request was served: by its last attempt. */
export function routingHeaders(context: RequestContext): Record<string, string> {
  const attempt = context.lastAttempt;
  const headers: Record<string, string> = {};
  const provider = attempt?.provider ?? context.provider;
  if (provider) headers['x-gateway-provider'] = provider;
  headers['x-gateway-retry-count'] = String(attempt?.retry ?? 0);
  if (attempt?.targetIndex != null) headers['x-gateway-target-index'] = attempt.targetIndex;
  headers['x-gateway-cache-status'] = attempt?.cacheStatus ?? 'DISABLED';
  if (attempt?.guardrailsFailed) headers['x-gateway-guardrails'] = 'failed';
  if (attempt?.ignoredParams.length) headers['x-gateway-ignored-params'] = attempt.ignoredParams.join(',');
  return headers;
}

export function setRoutingHeaders(res: Response, context: RequestContext): void {
  for (const [name, value] of Object.entries(routingHeaders(context))) res.setHeader(name, value);
}

/**
 * The edge: writes a GatewayResult to the client, frame by frame for streams, no faster
 * than the client reads (ClientStreamWriter: the source paused past STREAM_CLIENT_BUFFER_BYTES,
 * a client that reads nothing for STREAM_CLIENT_IDLE_MS disconnected and logged 499).
 */
export function sendGatewayResult(res: Response, context: RequestContext, result: GatewayResult): void {
  setRoutingHeaders(res, context);
  res.statusCode = result.status;
  if (result.kind === 'json') {
    res.setHeader('content-type', 'application/json');
    res.end(result.body);
    return;
  }
  const limits = clientStreamLimitsOf(res);
  const disconnectIdle = () => {
    context.noteFailure(new ClientClosedRequestError(`The client read nothing for ${limits.idleMs} ms (STREAM_CLIENT_IDLE_MS)`));
    res.statusCode = 499; // what the log row records; the client had the stream's 200
    res.destroy();
  };
  if (result.kind === 'binary') {
    res.setHeader('content-type', result.contentType);
    // A client that leaves destroys the provider's body (and request).
    pipeToClient(res, result.body, limits, disconnectIdle);
    return;
  }
  // A stream is SSE but where a dialect streams another form (Gemini's JSON array without `alt=sse`).
  res.setHeader('content-type', result.contentType ?? 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  const writer = new ClientStreamWriter(res, result.flow ?? null, limits, disconnectIdle);
  const subscription = result.frames.subscribe({
    next: (frame) => writer.write(frame),
    error: () => writer.end(),
    complete: () => writer.end(),
  });
  // A client that leaves unsubscribes, which aborts the upstream request (and ends the stream's outcome).
  if (res.destroyed) subscription.unsubscribe();
  else res.once('close', () => subscription.unsubscribe());
}
