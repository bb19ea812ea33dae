import { GatewayError } from '../common/errors/gateway-error';
import { IgnoredParams } from './ignored-params';

describe('IgnoredParams', () => {
  it('collects each ignored field once, without its indexes, in the order first seen', () => {
    const ignored = new IgnoredParams();
    ignored.ignore('tools[0].cache_control', 'a cache hint');
    ignored.ignore('context_management', 'context editing');
    ignored.ignore('tools[11].cache_control', 'a cache hint');
    ignored.ignore('messages[3].content[0].cache_control', 'a cache hint');
    expect(ignored.list()).toEqual(['tools[].cache_control', 'context_management', 'messages[].content[].cache_control']);
  });

  it('strict: the first ignored field is a 400 naming it exactly, with the reason', () => {
    const ignored = new IgnoredParams(true);
    let error: unknown;
    try {
      ignored.ignore('tools[2].eager_input_streaming', 'it only streams arguments unbuffered');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'strict_params', param: 'tools[2].eager_input_streaming' });
    expect((error as Error).message).toBe(
      'tools[2].eager_input_streaming would be ignored (it only streams arguments unbuffered); the config sets strict_params, which refuses any parameter a translation cannot keep',
    );
    expect(ignored.list()).toEqual([]);
  });
});
