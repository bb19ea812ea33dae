import { GatewayError } from '../../../common/errors/gateway-error';
import { EmbeddingCreateDto } from './embedding-create.dto';

/** The 400 a body gets, as [message, param]; null when it passes. */
function problem(body: Record<string, unknown>): [string, string | null] | null {
  try {
    EmbeddingCreateDto.validateBody({ model: 'text-embedding-3-small', ...body });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return [(error as GatewayError).message, (error as GatewayError).param];
  }
}

describe('EmbeddingCreateDto.validateBody', () => {
  it.each([
    ['a string', 'hello'],
    ['strings', ['a', 'b']],
    ['token ids', [1, 2, 0]],
    ['token id arrays', [[1, 2], [3]]],
  ])('accepts input as %s, with the optional fields and unknown ones', (_, input) => {
    expect(problem({ input, encoding_format: 'base64', dimensions: 256, user: 'alice', vendor_field: { x: 1 } })).toBeNull();
  });

  it.each([
    [{ input: undefined }, 'input must be a string, an array of strings, an array of token ids or an array of token id arrays', 'input'],
    [{ input: '' }, 'input should not be empty', 'input'],
    [{ input: [] }, 'input should not be empty', 'input'],
    [{ input: { text: 'a' } }, 'input must be a string, an array of strings, an array of token ids or an array of token id arrays', 'input'],
    [{ input: [true] }, 'input must be a string, an array of strings, an array of token ids or an array of token id arrays', 'input'],
    [{ input: ['a', ''] }, 'input[1] should not be empty', 'input[1]'],
    [{ input: ['a', 2] }, 'input[1] must be a string, like input[0]', 'input[1]'],
    [{ input: [1, -2] }, 'input[1] must be a token id (an integer >= 0)', 'input[1]'],
    [{ input: [1, 2.5] }, 'input[1] must be a token id (an integer >= 0)', 'input[1]'],
    [{ input: [[1], 'a'] }, 'input[1] must be an array of token ids, like input[0]', 'input[1]'],
    [{ input: [[1], []] }, 'input[1] should not be empty', 'input[1]'],
    [{ input: [[1], [2, 'x']] }, 'input[1][1] must be a token id (an integer >= 0)', 'input[1][1]'],
    [{ input: 'a', encoding_format: 'int8' }, 'encoding_format must be one of the following values: float, base64', 'encoding_format'],
    [{ input: 'a', dimensions: 0 }, 'dimensions must not be less than 1', 'dimensions'],
    [{ input: 'a', dimensions: 1.5 }, 'dimensions must be an integer number', 'dimensions'],
    [{ input: 'a', user: 7 }, 'user must be a string', 'user'],
  ])('rejects %j: %s', (body, message, param) => {
    expect(problem(body)).toEqual([message, param]);
  });

  it('requires a model', () => {
    expect(problem({ model: undefined, input: 'a' })).toEqual(['model must be a string', 'model']);
  });
});
