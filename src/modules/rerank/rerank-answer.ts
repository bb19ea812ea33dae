import { GatewayError } from '../../common/errors/gateway-error';
import type { NormalizedUsage } from '../../providers/usage';

const malformed = (what: string) => GatewayError.upstreamMalformed(`The provider's rerank answer ${what}`);

/** The text of a request's document (a string or `{text}`, as the body rules allow). */
function documentText(document: unknown): string {
  return typeof document === 'string' ? document : String((document as { text?: unknown })?.text ?? '');
}

/**
 * A provider's rerank answer (Cohere's, translated, or a Jina-shaped server's) in the
 * gateway's shape: `{object: "list", results: [{index, relevance_score, document?}], model, usage}`,
 * results best first (providers sort them, but the contract promises it, so it is not
 * left to each), each result's document taken from the request when `return_documents`
 * is true and left out otherwise, whatever the provider sent.
 */
export function toRerankAnswer(answer: Record<string, any>, body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(answer.results)) throw malformed('has no results array');
  const documents = Array.isArray(body.documents) ? body.documents : [];
  const withDocuments = body.return_documents === true;
  const results = answer.results.map((result: any, i: number) => {
    const index = result?.index;
    if (!Number.isInteger(index) || index < 0 || index >= documents.length) throw malformed(`names no document of the request at results[${i}].index`);
    if (typeof result.relevance_score !== 'number') throw malformed(`has no number at results[${i}].relevance_score`);
    const ranked: Record<string, unknown> = { index, relevance_score: result.relevance_score };
    if (withDocuments) ranked.document = { text: documentText(documents[index]) };
    return ranked;
  });
  results.sort((a: any, b: any) => b.relevance_score - a.relevance_score);
  const shaped: Record<string, unknown> = { object: 'list' };
  if (typeof answer.id === 'string') shaped.id = answer.id;
  return { ...shaped, results, model: typeof answer.model === 'string' ? answer.model : body.model, usage: answer.usage ?? null };
}

/**
 * Token usage of a rerank, where the provider counts tokens (Jina, vLLM: `total_tokens`,
 * `prompt_tokens`). Cohere bills searches (`usage.search_units`), which are no tokens:
 * no token usage then, and the units stay in the logged answer.
 */
export function rerankUsage(usage: Record<string, any> | null | undefined): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : usage.total_tokens;
  if (typeof prompt !== 'number' || !Number.isFinite(prompt) || prompt < 0) return null;
  return { promptTokens: prompt, completionTokens: 0, totalTokens: prompt, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}
