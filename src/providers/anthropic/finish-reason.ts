/**
 * Anthropic's `stop_reason` as OpenAI's `finish_reason`; null while the message runs.
 * `pause_turn` (a server tool's long turn paused) and reasons added later are `stop`,
 * the one value every client handles.
 */
export function finishReasonFromAnthropic(stopReason: unknown): 'stop' | 'length' | 'tool_calls' | 'content_filter' | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
