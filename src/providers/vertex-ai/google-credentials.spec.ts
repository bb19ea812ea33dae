import { generateKeyPairSync } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import type { CredentialFetch } from '../provider-adapter';
import { GoogleCredentials } from './google-credentials';

const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const serviceAccount = JSON.stringify({
  type: 'service_account',
  client_email: 'a@p.iam.gserviceaccount.com',
  private_key: pem,
  token_uri: 'http://127.0.0.1:9/token',
});
const target = (apiKey: string | null, virtualKeyId: string | null = 'vk-1') => ({ apiKey, virtualKeyId }) as ProviderTarget;

describe('GoogleCredentials', () => {
  let fetched: number;
  const fetch: CredentialFetch = async (request) => {
    fetched += 1;
    expect(request.url).toBe('http://127.0.0.1:9/token');
    return { status: 200, body: Buffer.from(JSON.stringify({ access_token: `token-${fetched}`, expires_in: 3600 })) };
  };
  beforeEach(() => (fetched = 0));

  it('sends a key that is not JSON as a ready access token, fetching nothing', async () => {
    expect(await new GoogleCredentials().accessToken(target('ya29.ready'), fetch)).toBe('ya29.ready');
    expect(fetched).toBe(0);
  });

  it('mints from a service-account JSON at its token_uri, once for concurrent requests, again after expiry', async () => {
    let now = 0;
    const credentials = new GoogleCredentials(() => now);
    const tokens = await Promise.all([1, 2, 3].map(() => credentials.accessToken(target(serviceAccount), fetch)));
    expect(tokens).toEqual(['token-1', 'token-1', 'token-1']);
    now += 3_600_000;
    expect(await credentials.accessToken(target(serviceAccount), fetch)).toBe('token-2');
  });

  it("never lends the gateway's own credentials to a request without a virtual key", async () => {
    const error = await new GoogleCredentials().accessToken(target(null, null), fetch).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: 'key' });
    expect(fetched).toBe(0);
  });

  it('names the field of a key that starts like JSON but is not', async () => {
    const error = await new GoogleCredentials().accessToken(target('{"client_email": '), fetch).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 400, param: 'key' });
  });
});
