import type * as http from 'node:http';
import type { MockCall } from './mock-call';

/** Anthropic's Messages API routes of the mock upstream (to be written). */
export function serveAnthropic(_res: http.ServerResponse, _call: MockCall): boolean {
  return false;
}
