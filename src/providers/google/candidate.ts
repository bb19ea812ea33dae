import { randomBytes } from 'node:crypto';
import type { GeminiCandidate, GeminiLogprobsCandidate, GeminiPart } from './gemini-types';

/** An id in OpenAI's style (`chatcmpl-…`, `call_…`) for what Gemini does not name. */
export function generatedId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** The answer's text: reasoning parts (`thought: true`) are Gemini's thinking summary, not the answer. */
export function answerText(parts: readonly GeminiPart[]): string | null {
  const texts = parts.filter((part) => typeof part.text === 'string' && part.thought !== true).map((part) => part.text as string);
  return texts.length ? texts.join('') : null;
}

/**
 * Gemini's thought summaries (parts with `thought: true`, sent when the request set
 * `includeThoughts`), as the `reasoning_content` OpenAI-compatible servers carry
 * reasoning text in; null when there are none.
 */
export function thoughtText(parts: readonly GeminiPart[]): string | null {
  const texts = parts.filter((part) => typeof part.text === 'string' && part.thought === true).map((part) => part.text as string);
  return texts.length ? texts.join('') : null;
}

/**
 * Gemini's function calls as OpenAI tool calls. Gemini sends each call whole, with its
 * arguments as an object, and (in the Gemini API) usually without an id, so one is made
 * up: the client echoes it back as `tool_call_id`, and the request translation finds
 * the function's name by it.
 */
export function toolCalls(parts: readonly GeminiPart[]): { id: string; type: 'function'; function: { name: string; arguments: string } }[] {
  return parts
    .filter((part) => part.functionCall)
    .map((part) => ({
      id: part.functionCall!.id || generatedId('call_'),
      type: 'function' as const,
      function: { name: String(part.functionCall!.name ?? ''), arguments: JSON.stringify(part.functionCall!.args ?? {}) },
    }));
}

const entry = (candidate: GeminiLogprobsCandidate) => {
  const token = String(candidate.token ?? '');
  return { token, logprob: candidate.logProbability ?? 0, bytes: [...Buffer.from(token, 'utf8')] };
};

/**
 * `logprobsResult` (asked for with `logprobs`) in OpenAI's `logprobs` shape: one entry
 * per chosen token, with the alternatives of the same position. Null when absent.
 */
export function logprobs(candidate: GeminiCandidate): { content: Record<string, unknown>[] } | null {
  const chosen = candidate.logprobsResult?.chosenCandidates;
  if (!Array.isArray(chosen)) return null;
  const top = candidate.logprobsResult?.topCandidates ?? [];
  return {
    content: chosen.map((token, position) => ({
      ...entry(token),
      top_logprobs: (top[position]?.candidates ?? []).map(entry),
    })),
  };
}
