import type * as http from 'node:http';
import type { MockCall } from './mock-call';

/** Google Gemini's generateContent routes of the mock upstream (to be written). */
export function serveGemini(_res: http.ServerResponse, _call: MockCall): boolean {
  return false;
}
