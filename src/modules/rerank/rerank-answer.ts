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

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null);

/**
 * Usage of a rerank: tokens where the provider counts them (Jina, vLLM: `total_tokens`,
 * `prompt_tokens`), priced at the model's input rate; Cohere's search units
 * (`usage.search_units`, no tokens) as `searchUnits`, priced per search. Null when the
 * answer reports neither.
 */
export function rerankUsage(usage: Record<string, any> | null | undefined): NormalizedUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const prompt = count(usage.prompt_tokens) ?? count(usage.total_tokens);
  const searchUnits = count(usage.search_units);
  if (prompt === null && searchUnits === null) return null;
  const tokens = prompt ?? 0;
  const rerank: NormalizedUsage = { promptTokens: tokens, completionTokens: 0, totalTokens: tokens, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  return searchUnits === null ? rerank : { ...rerank, searchUnits };
}
