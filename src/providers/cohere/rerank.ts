import { GatewayError } from '../../common/errors/gateway-error';
import { fieldOf } from '../translation-checks';

/**
 * A rerank body (`{model, query, documents, top_n?, return_documents?}`) for Cohere's v2
 * `/rerank`, which takes documents as strings and always answers without them: `{text}`
 * documents become their text, and `return_documents` stays with the gateway, which
 * puts the documents into the answer itself (the rerank operation's shape). Every other
 * field but `user` (the gateway logs it) is Cohere's own (`max_tokens_per_doc`, …) and passes as sent.
 */
export function toCohereRerankRequest(body: Record<string, unknown>): Record<string, unknown> {
  // `user` is the gateway's (logged), not a field of Cohere's rerank.
  const { return_documents: _kept, user: _user, ...request } = body;
  if (!Array.isArray(body.documents)) throw GatewayError.invalidRequest('documents must be an array', 'documents');
  request.documents = body.documents.map((document: unknown, i) => {
    if (typeof document === 'string') return document;
    const text = fieldOf(document, 'text');
    if (typeof text === 'string') return text;
    throw GatewayError.invalidRequest(`documents[${i}] must be a string or an object with a text`, `documents[${i}]`);
  });
  return request;
}

/**
 * A v2 rerank answer (`{id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}`)
 * with Cohere's bill as `usage.search_units`: a rerank is billed by searches, not tokens.
 */
export function fromCohereRerank(answer: Record<string, unknown>): Record<string, unknown> {
  const units = fieldOf(fieldOf(answer.meta, 'billed_units'), 'search_units');
  const { meta: _meta, ...rest } = answer;
  return typeof units === 'number' ? { ...rest, usage: { search_units: units } } : rest;
}
