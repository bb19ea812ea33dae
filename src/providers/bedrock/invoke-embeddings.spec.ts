import { GatewayError } from '../../common/errors/gateway-error';
import { mergeEmbeddingLists } from '../embedding-vectors';
import { fromBedrockEmbeddings, splitEmbedBody, toBedrockEmbedRequest } from './invoke-embeddings';

const paramOf = (run: () => unknown): string | null | undefined => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return (error as GatewayError).param;
  }
  throw new Error('expected a GatewayError');
};

describe('Bedrock embeddings', () => {
  it("maps Cohere's fields, search_document by default, and Titan's one text", () => {
    expect(toBedrockEmbedRequest({ model: 'eu.cohere.embed-multilingual-v3', input: ['a', 'b'], user: 'u', encoding_format: 'float' })).toEqual({
      texts: ['a', 'b'],
      input_type: 'search_document',
    });
    expect(toBedrockEmbedRequest({ model: 'cohere.embed-v4:0', input: 'a', dimensions: 512, input_type: 'clustering', truncate: 'START' })).toEqual({
      texts: ['a'],
      input_type: 'clustering',
      truncate: 'START',
      output_dimension: 512,
    });
    expect(toBedrockEmbedRequest({ model: 'amazon.titan-embed-g1-text-02', input: ['only'] })).toEqual({ inputText: 'only' });
    expect(toBedrockEmbedRequest({ model: 'amazon.titan-embed-text-v2:0', input: 'x', dimensions: 256, normalize: false })).toEqual({
      inputText: 'x',
      dimensions: 256,
      normalize: false,
    });
  });

  it('refuses, naming the field: token ids, a field the family lacks, a bad type, another model', () => {
    expect(paramOf(() => toBedrockEmbedRequest({ model: 'cohere.embed-english-v3', input: [1, 2] }))).toBe('input');
    expect(paramOf(() => toBedrockEmbedRequest({ model: 'cohere.embed-english-v3', input: 'a', normalize: true }))).toBe('normalize');
    expect(paramOf(() => toBedrockEmbedRequest({ model: 'amazon.titan-embed-text-v1', input: 'a', truncate: 'END' }))).toBe('truncate');
    expect(paramOf(() => toBedrockEmbedRequest({ model: 'amazon.titan-embed-text-v2:0', input: 'a', normalize: 'yes' }))).toBe('normalize');
    expect(paramOf(() => toBedrockEmbedRequest({ model: 'meta.llama3-8b-instruct-v1:0', input: 'a' }))).toBe('model');
    expect(paramOf(() => splitEmbedBody({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'], input_type: 'x' }))).toBe('input_type');
    expect(paramOf(() => splitEmbedBody({ model: 'amazon.titan-embed-text-v2:0', input: new Array(2049).fill('a') }))).toBe('input');
  });

  it('splits Titan one text a part and Cohere 96 texts a part; one request needs no split', () => {
    expect(splitEmbedBody({ model: 'amazon.titan-embed-text-v2:0', input: 'a' })).toBeNull();
    expect(splitEmbedBody({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'], dimensions: 256 })).toEqual([
      { model: 'amazon.titan-embed-text-v2:0', input: ['a'], dimensions: 256 },
      { model: 'amazon.titan-embed-text-v2:0', input: ['b'], dimensions: 256 },
    ]);
    expect(splitEmbedBody({ model: 'cohere.embed-english-v3', input: new Array(96).fill('t') })).toBeNull();
    expect(splitEmbedBody({ model: 'cohere.embed-english-v3', input: new Array(200).fill('t') })!.map((part) => (part.input as string[]).length)).toEqual([
      96, 96, 8,
    ]);
  });

  it("reads both of Cohere's answer shapes and Titan's, tokens from the body or Bedrock's header, and merges parts in order", () => {
    const headers = { 'x-amzn-bedrock-input-token-count': '7' };
    const floats = fromBedrockEmbeddings({ embeddings: [[0.5, -1]] }, { model: 'cohere.embed-english-v3', encoding_format: 'float' }, headers);
    const byType = fromBedrockEmbeddings({ embeddings: { float: [[0.5, -1]] } }, { model: 'cohere.embed-english-v3', encoding_format: 'float' }, headers);
    expect(floats).toEqual(byType);
    expect(floats).toMatchObject({ data: [{ embedding: [0.5, -1] }], usage: { prompt_tokens: 7 } });
    const titan = fromBedrockEmbeddings({ embedding: [0.25], inputTextTokenCount: 3 }, { model: 'amazon.titan-embed-text-v1', encoding_format: 'base64' }, {});
    expect(titan).toMatchObject({ data: [{ embedding: Buffer.from(new Float32Array([0.25]).buffer).toString('base64') }], usage: { prompt_tokens: 3 } });
    expect(fromBedrockEmbeddings({ embeddings: [[1]] }, { model: 'cohere.embed-english-v3' }, {})).not.toHaveProperty('usage');
    expect(() => fromBedrockEmbeddings({ embedding: 'nope' }, { model: 'amazon.titan-embed-text-v1' }, {})).toThrow(GatewayError);

    const merged = mergeEmbeddingLists(
      [titan, fromBedrockEmbeddings({ embedding: [1] }, { model: 'amazon.titan-embed-text-v1' }, { 'x-amzn-bedrock-input-token-count': '2' })],
      'amazon.titan-embed-text-v1',
    );
    expect(merged).toMatchObject({ object: 'list', model: 'amazon.titan-embed-text-v1', usage: { prompt_tokens: 5, total_tokens: 5 } });
    expect((merged.data as { index: number }[]).map((item) => item.index)).toEqual([0, 1]);
    expect(mergeEmbeddingLists([titan, { data: [{ embedding: [1] }] }], 'm')).not.toHaveProperty('usage');
  });
});
