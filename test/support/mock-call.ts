import type * as http from 'node:http';

/** One request as the mock upstream's vendor routes see it (body already read and parsed). */
export interface MockCall {
  method: string;
  path: string;
  rawQuery: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there was none or it was not JSON (then badJson is true). */
  body: any;
  badJson: boolean;
  /** The body as received: what a signature covers (AWS SigV4 in mock-bedrock.ts), and a form body, which `body` cannot hold. */
  rawBody?: string;
  /** mock-flaky-* counters of this mock server (cleared by reset()). */
  flakyFailures: Map<string, number>;
}
