import { Observable } from 'rxjs';
import type { GatewayResult } from '../routing/gateway-result';

/** The JSON of one `data: …` SSE frame; null for a frame without data. */
function dataOf(frame: string): string | null {
  const lines = frame.split(/\r?\n/).filter((line) => line.startsWith('data:'));
  return lines.length ? lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n') : null;
}

/**
 * `:streamGenerateContent` without `alt=sse`: Gemini then streams one JSON array, written
 * chunk by chunk (`[` chunk `,\r\n` chunk … `]`) as `application/json`. The gateway reads
 * every Gemini stream as SSE and writes this form from its frames; a stream that ends with
 * an error leaves the array open, as Google's does.
 */
export function asJsonArray(result: GatewayResult): GatewayResult {
  if (result.kind === 'json') return { ...result, body: Buffer.concat([Buffer.from('['), result.body, Buffer.from(']')]) };
  if (result.kind !== 'sse') return result;
  const frames = new Observable<string>((subscriber) => {
    let first = true;
    const subscription = result.frames.subscribe({
      next: (frame) => {
        const data = dataOf(frame);
        if (data === null) return;
        subscriber.next((first ? '[' : ',\r\n') + data);
        first = false;
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => {
        subscriber.next(first ? '[]' : ']');
        subscriber.complete();
      },
    });
    return () => subscription.unsubscribe();
  });
  return { ...result, frames, contentType: 'application/json; charset=UTF-8' };
}
