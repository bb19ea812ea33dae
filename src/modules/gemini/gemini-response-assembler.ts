import type { NormalizedUsage } from '../../providers/usage';
import { usageFromGemini } from '../../providers/google/gemini-usage';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { isObject } from '../../common/config-fields';

type Json = Record<string, unknown>;

/** Gemini's usage as the gateway prices it. */
export function usageOfGeminiAnswer(answer: Json | undefined): NormalizedUsage | null {
  const metadata = answer?.usageMetadata;
  return isObject(metadata) ? usageFromOpenAI(usageFromGemini(metadata)) : null;
}

interface CandidateSoFar {
  index: number;
  thought: string;
  text: string;
  others: Json[];
  finishReason?: string;
}

/**
 * Adds up Gemini's stream chunks (each a GenerateContentResponse) into the one response a
 * client gets from joining them, for the log: per candidate the thought text, the text and
 * every other part (function calls, inline data) in order; the last usage, finish reason,
 * model version and response id.
 */
export class GeminiResponseAssembler {
  private readonly candidates = new Map<number, CandidateSoFar>();
  private usageMetadata: unknown;
  private modelVersion: unknown;
  private responseId: unknown;
  private promptFeedback: unknown;
  finished = false;

  /** Whether the chunk carried answer content (for the time to first token). */
  add(chunk: Json): boolean {
    if (chunk.usageMetadata !== undefined) this.usageMetadata = chunk.usageMetadata;
    this.modelVersion ??= chunk.modelVersion;
    this.responseId ??= chunk.responseId;
    this.promptFeedback ??= chunk.promptFeedback;
    if (isObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason) this.finished = true;
    let content = false;
    const candidates = Array.isArray(chunk.candidates) ? chunk.candidates : [];
    candidates.forEach((raw: unknown, position) => {
      if (!isObject(raw)) return;
      const index = typeof raw.index === 'number' ? raw.index : position;
      const candidate = this.candidates.get(index) ?? { index, thought: '', text: '', others: [] };
      this.candidates.set(index, candidate);
      if (typeof raw.finishReason === 'string' && raw.finishReason) {
        candidate.finishReason = raw.finishReason;
        this.finished = true;
      }
      const parts = isObject(raw.content) && Array.isArray(raw.content.parts) ? raw.content.parts : [];
      for (const part of parts) {
        if (!isObject(part)) continue;
        content = true;
        if (typeof part.text === 'string' && part.thought === true) candidate.thought += part.text;
        else if (typeof part.text === 'string') candidate.text += part.text;
        else candidate.others.push(part);
      }
    });
    return content;
  }

  response(): Json {
    const candidates = [...this.candidates.values()].map((candidate) => ({
      content: {
        role: 'model',
        parts: [
          ...(candidate.thought ? [{ text: candidate.thought, thought: true }] : []),
          ...(candidate.text ? [{ text: candidate.text }] : []),
          ...candidate.others,
        ],
      },
      ...(candidate.finishReason ? { finishReason: candidate.finishReason } : {}),
      index: candidate.index,
    }));
    const optional = { promptFeedback: this.promptFeedback, usageMetadata: this.usageMetadata, modelVersion: this.modelVersion, responseId: this.responseId };
    return { candidates, ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)) };
  }
}
