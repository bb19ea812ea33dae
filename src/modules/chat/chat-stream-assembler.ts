import type { NormalizedUsage } from '../../providers/usage';
import { usageFromOpenAI } from '../../providers/openai-usage';

interface ToolCallDraft {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

interface ChoiceDraft {
  index: number;
  role: string;
  content: string | null;
  refusal: string | null;
  toolCalls: ToolCallDraft[];
  finishReason: string | null;
}

/**
 * Rebuilds the `chat.completion` object a stream amounts to, from its
 * `chat.completion.chunk`s: what the log stores as the response of a streamed request.
 */
export class ChatStreamAssembler {
  private id: string | null = null;
  private model: string | null = null;
  private created: number | null = null;
  private systemFingerprint: string | null = null;
  private readonly choices = new Map<number, ChoiceDraft>();
  usage: NormalizedUsage | null = null;
  private rawUsage: unknown = null;
  /** Chunks that carried generated content: the estimate of the tokens sent when no usage came. */
  contentChunks = 0;

  /** Adds one chunk; returns true when it carried generated content (for time to first token). */
  add(chunk: Record<string, any>): boolean {
    this.id ??= chunk.id ?? null;
    this.model ??= chunk.model ?? null;
    this.created ??= chunk.created ?? null;
    this.systemFingerprint ??= chunk.system_fingerprint ?? null;
    if (chunk.usage) {
      this.rawUsage = chunk.usage;
      this.usage = usageFromOpenAI(chunk.usage);
    }
    let hasContent = false;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const draft = this.choice(choice.index ?? 0);
      const delta = choice.delta ?? {};
      if (delta.role) draft.role = delta.role;
      if (typeof delta.content === 'string') {
        draft.content = (draft.content ?? '') + delta.content;
        hasContent ||= delta.content.length > 0;
      }
      if (typeof delta.refusal === 'string') draft.refusal = (draft.refusal ?? '') + delta.refusal;
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const slot = (draft.toolCalls[call.index ?? 0] ??= { function: { name: '', arguments: '' } });
        if (call.id) slot.id = call.id;
        if (call.type) slot.type = call.type;
        if (call.function?.name) slot.function.name += call.function.name;
        if (call.function?.arguments) slot.function.arguments += call.function.arguments;
        hasContent = true;
      }
      if (choice.finish_reason) draft.finishReason = choice.finish_reason;
    }
    if (hasContent) this.contentChunks++;
    return hasContent;
  }

  result(): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      system_fingerprint: this.systemFingerprint,
      choices: [...this.choices.values()]
        .sort((a, b) => a.index - b.index)
        .map((c) => ({
          index: c.index,
          message: {
            role: c.role,
            content: c.content,
            refusal: c.refusal,
            ...(c.toolCalls.length ? { tool_calls: c.toolCalls.filter(Boolean) } : {}),
          },
          finish_reason: c.finishReason,
        })),
      usage: this.rawUsage,
    };
  }

  private choice(index: number): ChoiceDraft {
    let draft = this.choices.get(index);
    if (!draft) {
      draft = { index, role: 'assistant', content: null, refusal: null, toolCalls: [], finishReason: null };
      this.choices.set(index, draft);
    }
    return draft;
  }
}
