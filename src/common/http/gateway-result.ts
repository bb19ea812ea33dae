import type { Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import type { Observable } from 'rxjs';

/**
 * What an operation service hands back to its controller: a JSON body (the provider's
 * bytes, passed through), a stream of ready-made SSE frames, or a binary body (audio)
 * streamed from the provider to the client as it comes.
 */
export type GatewayResult =
  | { kind: 'json'; status: number; body: Buffer }
  | { kind: 'sse'; status: number; frames: Observable<string> }
  | { kind: 'binary'; status: number; contentType: string; body: Readable };

/** How a request was served: the part of the request context the routing headers report. */
export interface ServedBy {
  provider: string | null;
  retryCount: number;
  targetIndex: string | null;
  cacheStatus: string;
  guardrailsFailed: boolean;
  ignoredParams: string[];
}

/** The response headers of CONTRACT section 2 that depend on how the request was served. */
export function routingHeaders(context: ServedBy): Record<string, string> {
  const headers: Record<string, string> = {};
  if (context.provider) headers['x-gateway-provider'] = context.provider;
  headers['x-gateway-retry-count'] = String(context.retryCount);
  if (context.targetIndex !== null) headers['x-gateway-target-index'] = context.targetIndex;
  headers['x-gateway-cache-status'] = context.cacheStatus;
  if (context.guardrailsFailed) headers['x-gateway-guardrails'] = 'failed';
  if (context.ignoredParams.length) headers['x-gateway-ignored-params'] = context.ignoredParams.join(',');
  return headers;
}

export function setRoutingHeaders(res: Response, context: ServedBy): void {
  for (const [name, value] of Object.entries(routingHeaders(context))) res.setHeader(name, value);
}

/** The edge: writes a GatewayResult to the client, frame by frame for streams. */
export function sendGatewayResult(res: Response, context: ServedBy, result: GatewayResult): void {
  setRoutingHeaders(res, context);
  res.statusCode = result.status;
  if (result.kind === 'json') {
    res.setHeader('content-type', 'application/json');
    res.end(result.body);
    return;
  }
  if (result.kind === 'binary') {
    res.setHeader('content-type', result.contentType);
    // Backpressure both ways; a client that leaves destroys the provider's body (and request).
    pipeline(result.body, res, () => undefined);
    return;
  }
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  const subscription = result.frames.subscribe({
    next: (frame) => res.write(frame),
    error: () => res.end(),
    complete: () => res.end(),
  });
  // A client that leaves unsubscribes, which aborts the upstream request.
  res.once('close', () => subscription.unsubscribe());
}
