/**
 * Gemini's reasons for stopping that mean "the answer was filtered". The image ones
 * only occur with image output but are filters all the same.
 */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * Gemini's `finishReason` as OpenAI's `finish_reason`. Gemini ends a turn that called
 * functions with STOP; OpenAI clients look for `tool_calls` to run them. Reasons
 * without an OpenAI counterpart (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, ...) are
 * `stop`, the one value every client handles.
 */
export function finishReasonFromGemini(reason: string, calledFunctions: boolean): 'stop' | 'length' | 'content_filter' | 'tool_calls' {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  if (reason === 'STOP' && calledFunctions) return 'tool_calls';
  return 'stop';
}
