import { GatewayError } from '../../common/errors/gateway-error';
import { fromGeminiEmbeddings, fromVertexPredictions, googleEmbedInput, toGeminiBatchEmbedRequest, toVertexPredictRequest } from './embed';

describe('Google embeddings translation', () => {
  it('builds batchEmbedContents and :predict bodies from an OpenAI body', () => {
    const input = googleEmbedInput(
      { model: 'gemini-embedding-001', input: ['a', 'b'], dimensions: 2, task_type: 'CLUSTERING', user: 'u', encoding_format: 'base64' },
      'google',
    );
    expect(toGeminiBatchEmbedRequest(input, 'gemini-embedding-001')).toEqual({
      requests: ['a', 'b'].map((text) => ({
        model: 'models/gemini-embedding-001',
        content: { parts: [{ text }] },
        outputDimensionality: 2,
        taskType: 'CLUSTERING',
      })),
    });
    expect(toVertexPredictRequest(input)).toEqual({
      instances: [
        { content: 'a', task_type: 'CLUSTERING' },
        { content: 'b', task_type: 'CLUSTERING' },
      ],
      parameters: { outputDimensionality: 2 },
    });
  });

  it.each([
    [{ model: 'm', input: [1, 2] }, 'input'],
    [{ model: 'm', input: [] }, 'input'],
    [{ model: 'm', input: 'x', dimensions: 1.5 }, 'dimensions'],
    [{ model: 'm', input: 'x', task_type: 3 }, 'task_type'],
    [{ model: 'm', input: 'x', truncate: 'END' }, 'truncate'],
  ])('refuses %j naming %s', (body, param) => {
    expect(() => googleEmbedInput(body, 'google')).toThrow(expect.objectContaining({ status: 400, param }));
  });

  it('answers in OpenAI shape, base64 as float32 bytes; Gemini usage estimated, Vertex usage summed', () => {
    const gemini = fromGeminiEmbeddings({ embeddings: [{ values: [0.5, -0.25] }] }, { model: 'g', input: 'abcdefgh', encoding_format: 'base64' }) as any;
    expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(gemini.data[0].embedding, 'base64')).buffer))).toEqual([0.5, -0.25]);
    expect(gemini.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    const vertex = fromVertexPredictions(
      { predictions: [{ embeddings: { values: [1], statistics: { token_count: 3 } } }, { embeddings: { values: [2], statistics: { token_count: 4 } } }] },
      { model: 'v', input: ['x', 'y'], encoding_format: 'float' },
    ) as any;
    expect(vertex).toEqual({
      object: 'list',
      model: 'v',
      data: [
        { object: 'embedding', index: 0, embedding: [1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    // No count from Vertex is no usage, not a free call.
    expect(fromVertexPredictions({ predictions: [{ embeddings: { values: [1] } }] }, { model: 'v', input: 'x' })).not.toHaveProperty('usage');
  });

  it('an answer without vectors is a malformed upstream answer', () => {
    expect(() => fromGeminiEmbeddings({ embedding: { values: [1] } }, { model: 'g', input: 'x' })).toThrow(GatewayError);
    expect(() => fromVertexPredictions({ predictions: [{ embeddings: { values: ['1'] } }] }, { model: 'v', input: 'x' })).toThrow(GatewayError);
  });
});
