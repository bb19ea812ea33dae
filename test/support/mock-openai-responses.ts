import type * as http from 'node:http';
import type { MockCall } from './mock-call';

/** OpenAI's Responses API routes of the mock upstream (to be written). */
export function serveOpenAIResponses(_res: http.ServerResponse, _call: MockCall): boolean {
  return false;
}
