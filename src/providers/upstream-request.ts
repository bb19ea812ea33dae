import type { Readable } from 'node:stream';

/** An HTTP request to a provider, built by an adapter and sent by the upstream client. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  /** JSON text, the JSON bytes the client sent (see jsonPayload), or an upload streamed through (sent once: no retry can replay it). */
  body?: string | Buffer | Readable;
  /**
   * Fields of the client's body a translation dropped because they only tune delivery or
   * caching (see IgnoredParams); the request path names them in a header and the log.
   */
  ignoredParams?: readonly string[];
}
