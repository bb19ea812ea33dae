/**
 * The parts of Gemini's `GenerateContentResponse` the gateway reads
 * (https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse).
 * Everything is optional: the answer comes off the wire unchecked, and each reader
 * guards what it uses.
 */
export interface GeminiPart {
  text?: string;
  /** A reasoning summary part; never shown as the answer's content. */
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
}

export interface GeminiLogprobsCandidate {
  token?: string;
  logProbability?: number;
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  logprobsResult?: {
    topCandidates?: { candidates?: GeminiLogprobsCandidate[] }[];
    chosenCandidates?: GeminiLogprobsCandidate[];
  };
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}
