import { GatewayError } from '../common/errors/gateway-error';
import { fieldName, IgnoredParams } from './ignored-params';

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

  it("records a caller's own keys percent-encoded, so the list is a valid header value that cannot inject one", () => {
    const ignored = new IgnoredParams();
    for (const key of ['user_id', '中', 'a\r\nx-injected: 1', 'b,c', '100%', 'emoji 🙂', '\ud800']) ignored.ignore(`metadata.${key}`, 'no chat counterpart');
    expect(ignored.list()).toEqual([
      'metadata.user_id',
      'metadata.%E4%B8%AD',
      'metadata.a%0D%0Ax-injected:%201',
      'metadata.b%2Cc',
      'metadata.100%25',
      'metadata.emoji%20%F0%9F%99%82',
      'metadata.%EF%BF%BD',
    ]);
    const header = ignored.list().join(',');
    expect(header).toMatch(/^[\x21-\x7e]+$/);
    expect(header.split(',').map(decodeURIComponent)).toEqual([
      'metadata.user_id',
      'metadata.中',
      'metadata.a\r\nx-injected: 1',
      'metadata.b,c',
      'metadata.100%',
      'metadata.emoji 🙂',
      'metadata.\ufffd',
    ]);
  });

  it('leaves the names of the APIs themselves as they are', () => {
    for (const name of ['tools[].cache_control', 'messages[].content[].cache_control', 'stream_options.include_obfuscation', "a-b_c.d[]!$&'()*+/:;<=>?@^`{|}~"])
      expect(fieldName(name)).toBe(name);
  });
});
