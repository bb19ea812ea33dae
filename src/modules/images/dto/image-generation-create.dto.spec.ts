import { GatewayError } from '../../../common/errors/gateway-error';
import { ImageGenerationCreateDto } from './image-generation-create.dto';

/** The 400 a body gets, as [message, param]; null when it passes. */
function problem(body: Record<string, unknown>): [string, string | null] | null {
  try {
    ImageGenerationCreateDto.validateBody({ model: 'gpt-image-1', prompt: 'A lighthouse', ...body });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return [(error as GatewayError).message, (error as GatewayError).param];
  }
}

describe('ImageGenerationCreateDto.validateBody', () => {
  it('accepts every checked field and passes unknown ones', () => {
    const body = {
      n: 10,
      size: '1536x1024',
      quality: 'high',
      response_format: 'b64_json',
      style: 'vivid',
      user: 'alice',
      background: 'transparent',
      output_format: 'webp',
      stream: false,
      moderation: 'low',
    };
    expect(problem(body)).toBeNull();
    expect(problem({ size: 'auto', quality: 'hd' })).toBeNull();
  });

  it.each([
    [{ model: undefined }, 'model must be a string', 'model'],
    [{ prompt: undefined }, 'prompt must be a string', 'prompt'],
    [{ prompt: '' }, 'prompt should not be empty', 'prompt'],
    [{ n: 0 }, 'n must not be less than 1', 'n'],
    [{ n: 11 }, 'n must not be greater than 10', 'n'],
    [{ size: '1024' }, 'size must be auto or <width>x<height>, e.g. 1024x1024', 'size'],
    [{ size: '0x1024' }, 'size must be auto or <width>x<height>, e.g. 1024x1024', 'size'],
    [{ size: 1024 }, 'size must be auto or <width>x<height>, e.g. 1024x1024', 'size'],
    [{ quality: 'ultra' }, 'quality must be one of the following values: auto, low, medium, high, standard, hd', 'quality'],
    [{ response_format: 'png' }, 'response_format must be one of the following values: url, b64_json', 'response_format'],
    [{ style: 'bold' }, 'style must be one of the following values: vivid, natural', 'style'],
    [{ background: 'white' }, 'background must be one of the following values: auto, transparent, opaque', 'background'],
    [{ output_format: 'gif' }, 'output_format must be one of the following values: png, jpeg, webp', 'output_format'],
    [{ stream: true }, 'stream must be false: streamed image generation is not supported', 'stream'],
  ])('rejects %j: %s', (body, message, param) => {
    expect(problem(body)).toEqual([message, param]);
  });

  it('lists every problem, param naming the first', () => {
    expect(problem({ prompt: '', n: 0 })).toEqual(['prompt should not be empty; n must not be less than 1', 'prompt']);
  });
});
