import { GatewayError } from '../../common/errors/gateway-error';
import { rerankUsage, toRerankAnswer } from './rerank-answer';

describe('toRerankAnswer', () => {
  const body = { model: 'rerank-v3.5', query: 'q', documents: ['zero', { text: 'one' }, 'two'] };

  it('sorts best first, adds documents from the request only when asked, and keeps id, model and usage', () => {
    const answer = {
      id: 'r1',
      model: 'jina-reranker-v2',
      results: [
        { index: 0, relevance_score: 0.1, document: { text: 'zero' } },
        { index: 1, relevance_score: 0.7 },
      ],
      usage: { total_tokens: 12 },
    };
    expect(toRerankAnswer(answer, body)).toEqual({
      object: 'list',
      id: 'r1',
      results: [
        { index: 1, relevance_score: 0.7 },
        { index: 0, relevance_score: 0.1 },
      ],
      model: 'jina-reranker-v2',
      usage: { total_tokens: 12 },
    });
    expect(
      toRerankAnswer(
        {
          results: [
            { index: 2, relevance_score: 0.2 },
            { index: 1, relevance_score: 0.3 },
          ],
        },
        { ...body, return_documents: true },
      ),
    ).toEqual({
      object: 'list',
      results: [
        { index: 1, relevance_score: 0.3, document: { text: 'one' } },
        { index: 2, relevance_score: 0.2, document: { text: 'two' } },
      ],
      model: 'rerank-v3.5',
      usage: null,
    });
  });

  it.each([[{}], [{ results: [{ index: 3, relevance_score: 1 }] }], [{ results: [{ index: 0 }] }]])('a malformed answer %j is a 502', (answer) => {
    expect(() => toRerankAnswer(answer, body)).toThrow(GatewayError);
    try {
      toRerankAnswer(answer, body);
    } catch (error) {
      expect((error as GatewayError).status).toBe(502);
    }
  });

  it('token usage where the provider counts tokens, search units where it bills searches', () => {
    expect(rerankUsage({ total_tokens: 12 })).toMatchObject({ promptTokens: 12, totalTokens: 12, completionTokens: 0 });
    expect(rerankUsage({ total_tokens: 12 })?.searchUnits).toBeUndefined();
    expect(rerankUsage({ search_units: 3 })).toMatchObject({ promptTokens: 0, totalTokens: 0, searchUnits: 3 });
    expect(rerankUsage({ search_units: -1 })).toBeNull();
    expect(rerankUsage(undefined)).toBeNull();
  });
});
