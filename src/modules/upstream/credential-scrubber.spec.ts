import type { ProviderTarget } from '../../providers/provider-target';
import type { SseStreamHandler } from './sse-relay';
import { CredentialScrubber } from './credential-scrubber';

const target = (over: Partial<ProviderTarget> = {}): ProviderTarget => ({
  provider: 'openai',
  apiKey: null,
  customHost: null,
  organization: null,
  project: null,
  providerOptions: {},
  strictParams: false,
  virtualKeyId: null,
  ...over,
});
const request = (headers: Record<string, string>) => ({ method: 'POST' as const, url: 'https://h.example/v1', headers });

describe('CredentialScrubber', () => {
  const key = 'sk-live-0123456789abcdef';

  it('hides the key of Authorization, api-key style headers and the target in bodies, headers and text', () => {
    const scrubber = CredentialScrubber.of(request({ authorization: `Bearer ${key}`, 'content-type': 'application/json' }), target({ apiKey: key }));
    const body = Buffer.from(`{"error":{"message":"Incorrect API key provided: ${key}. Header was Bearer ${key}"}}`);
    expect(scrubber.bytes(body).toString()).toBe('{"error":{"message":"Incorrect API key provided: [REDACTED]. Header was Bearer [REDACTED]"}}');
    expect(scrubber.headers({ 'retry-after': '1', 'x-echo': key })).toEqual({ 'retry-after': '1', 'x-echo': '[REDACTED]' });
    for (const name of ['api-key', 'x-api-key', 'x-goog-api-key', 'X-Amz-Security-Token']) {
      expect(CredentialScrubber.of(request({ [name]: 'credential-value-1' }), target()).text('was credential-value-1!')).toBe('was [REDACTED]!');
    }
  });

  it('hides secret provider options (AWS session token) and a minted access token, not a service account JSON', () => {
    const json = '{"type":"service_account","private_key":"-----BEGIN"}';
    const scrubber = CredentialScrubber.of(
      request({}),
      target({ apiKey: json, accessToken: 'ya29.token-123456', providerOptions: { aws_session_token: 'FwoGZXIvYXdzEJr//token', aws_region: 'us-east-1' } }),
    );
    expect(scrubber.text('ya29.token-123456 FwoGZXIvYXdzEJr//token us-east-1')).toBe('[REDACTED] [REDACTED] us-east-1');
    // As a JSON string with `/` escaped, the same token.
    expect(scrubber.text('"FwoGZXIvYXdzEJr\\/\\/token"')).toBe('"[REDACTED]"');
    expect(scrubber.text(json)).toBe(json);
  });

  it('returns its input when there is nothing to hide, and ignores values too short to be keys', () => {
    const none = CredentialScrubber.of(request({ authorization: 'Bearer abc' }), target({ apiKey: 'abc' }));
    expect(none).toBe(CredentialScrubber.NONE);
    const body = Buffer.from('abc abc');
    expect(none.bytes(body)).toBe(body);
    const scrubber = CredentialScrubber.of(request({ authorization: `Bearer ${key}` }), target());
    expect(scrubber.bytes(body)).toBe(body);
  });

  it('hands a stream handler events with the credentials hidden', () => {
    const seen: string[] = [];
    const handler: SseStreamHandler = {
      onEvent: (event) => (seen.push(event.data), [event.data]),
      isComplete: () => true,
      errorFrame: () => '',
      finish: () => ({ responseBody: null, usage: null, servedModel: null }),
    };
    const wrapped = CredentialScrubber.of(request({ authorization: `Bearer ${key}` }), target()).stream(handler);
    expect(wrapped.onEvent({ data: `{"echo":"${key}"}`, event: undefined, id: undefined })).toEqual(['{"echo":"[REDACTED]"}']);
    expect(seen).toEqual(['{"echo":"[REDACTED]"}']);
    expect(CredentialScrubber.NONE.stream(handler)).toBe(handler);
  });
});
