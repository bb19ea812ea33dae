import { emptyUsage, type NormalizedUsage } from '../../providers/usage';

/** Events kept per direction in a session's log row; a long session keeps its first ones and counts the rest. */
export const MAX_LOGGED_EVENTS = 1000;

/** Server events whose `delta` is base64 audio (not text, as in `response.audio_transcript.delta`). */
const AUDIO_DELTA_EVENTS = new Set(['response.audio.delta', 'response.output_audio.delta']);

/**
 * An event as the log keeps it: audio payloads replaced by their size in bytes (any
 * `audio` field, as in `input_audio_buffer.append` and `input_audio` parts, becomes
 * `audio_bytes`; an audio delta's `delta` becomes `delta_bytes`), the rest as sent. A
 * session streams megabytes of audio; the log keeps what happened, not the sound.
 */
export function summariseEvent(event: Record<string, unknown>): Record<string, unknown> {
  const summary = withoutAudio(event) as Record<string, unknown>;
  if (AUDIO_DELTA_EVENTS.has(String(event.type)) && typeof event.delta === 'string') {
    delete summary.delta;
    summary.delta_bytes = base64Bytes(event.delta);
  }
  return summary;
}

function withoutAudio(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAudio);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'audio' && typeof child === 'string') kept.audio_bytes = base64Bytes(child);
    else kept[key] = withoutAudio(child);
  }
  return kept;
}

function base64Bytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

/** The usage of one `response.done` event, normalised (text and audio tokens apart, for pricing). */
export function usageOfResponseDone(event: Record<string, any>): NormalizedUsage | null {
  const usage = event?.response?.usage;
  if (!usage || typeof usage !== 'object') return null;
  const input = usage.input_token_details ?? {};
  const output = usage.output_token_details ?? {};
  const promptTokens = num(usage.input_tokens);
  const completionTokens = num(usage.output_tokens);
  return {
    ...emptyUsage(),
    promptTokens,
    completionTokens,
    totalTokens: num(usage.total_tokens) || promptTokens + completionTokens,
    cachedTokens: num(input.cached_tokens),
    audioPromptTokens: num(input.audio_tokens),
    cachedAudioTokens: num(input.cached_tokens_details?.audio_tokens),
    audioCompletionTokens: num(output.audio_tokens),
  };
}

/** Sums the usage of a session's responses. */
export function addUsage(total: NormalizedUsage | null, more: NormalizedUsage): NormalizedUsage {
  if (!total) return { ...more };
  const sum = (a?: number, b?: number) => (a ?? 0) + (b ?? 0);
  return {
    promptTokens: total.promptTokens + more.promptTokens,
    completionTokens: total.completionTokens + more.completionTokens,
    totalTokens: total.totalTokens + more.totalTokens,
    cachedTokens: total.cachedTokens + more.cachedTokens,
    cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
    reasoningTokens: total.reasoningTokens + more.reasoningTokens,
    audioPromptTokens: sum(total.audioPromptTokens, more.audioPromptTokens),
    cachedAudioTokens: sum(total.cachedAudioTokens, more.cachedAudioTokens),
    audioCompletionTokens: sum(total.audioCompletionTokens, more.audioCompletionTokens),
  };
}

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
