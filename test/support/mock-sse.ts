import type * as http from 'node:http';
// A cycle (mock-upstream.ts imports the vendor routes that import this), harmless: calls happen per request.
import { dropConnection, type Behaviour } from './mock-upstream';

/** Writes the SSE chunks (one write each, `delayMs` apart), then ends the reply, or drops it when `cut`. */
export function streamEvents(res: http.ServerResponse, chunks: string[], behaviour: Pick<Behaviour, 'delayMs'>, cut = false): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const finish = () => (cut ? setTimeout(() => dropConnection(res), 10) : res.end());
  if (behaviour.delayMs === 0) {
    for (const chunk of chunks) res.write(chunk);
    if (cut) res.write('', () => finish());
    else finish();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  let next = 0;
  res.once('close', () => clearTimeout(timer));
  const pump = (): void => {
    if (res.destroyed) return;
    if (next === chunks.length) return void finish();
    res.write(chunks[next++]);
    timer = setTimeout(pump, behaviour.delayMs);
  };
  pump();
}

/** mock-stream-empty: the 200 event-stream headers, then the connection goes before any event. */
export function dropAfterHeaders(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const timer = setTimeout(() => dropConnection(res), 10);
  res.once('close', () => clearTimeout(timer));
}
