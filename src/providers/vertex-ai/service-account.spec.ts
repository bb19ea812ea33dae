import { generateKeyPairSync, verify } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import { CLOUD_PLATFORM_SCOPE, GOOGLE_TOKEN_URI, parseServiceAccount, tokenFromAnswer, tokenRequest } from './service-account';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const json = {
  type: 'service_account',
  client_email: 'gw@proj.iam.gserviceaccount.com',
  private_key: pem,
  private_key_id: 'kid-1',
  token_uri: 'http://127.0.0.1:9/token',
};

function decode(assertion: string) {
  const [header, claims, signature] = assertion.split('.');
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    claims: JSON.parse(Buffer.from(claims, 'base64url').toString()),
    verifiesWith: (key: typeof publicKey) => verify('sha256', Buffer.from(`${header}.${claims}`), key, Buffer.from(signature, 'base64url')),
  };
}

describe('service-account token exchange', () => {
  it('signs an RS256 assertion for the JSON token_uri and posts it there', () => {
    const request = tokenRequest(parseServiceAccount(json, 'key'), CLOUD_PLATFORM_SCOPE, 1_700_000_000);
    expect(request.url).toBe('http://127.0.0.1:9/token');
    const form = new URLSearchParams(String(request.body));
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const assertion = decode(form.get('assertion')!);
    expect(assertion.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    expect(assertion.claims).toEqual({ iss: json.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: json.token_uri, iat: 1_700_000_000, exp: 1_700_003_600 });
    expect(assertion.verifiesWith(publicKey)).toBe(true);
    expect(assertion.verifiesWith(other.publicKey)).toBe(false);
  });

  it("uses Google's token endpoint when the JSON names none", () => {
    const { token_uri: _omitted, ...withoutUri } = json;
    expect(parseServiceAccount(withoutUri, 'key').tokenUri).toBe(GOOGLE_TOKEN_URI);
  });

  it.each([
    [{ ...json, client_email: undefined }, 'key.client_email'],
    [{ ...json, private_key: '' }, 'key.private_key'],
    [{ ...json, private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----' }, 'key.private_key'],
    [{ ...json, type: 'authorized_user' }, 'key.type'],
    [{ ...json, token_uri: 'file:///etc/passwd' }, 'key.token_uri'],
    [['not', 'an', 'object'], 'key'],
  ])('refuses a malformed JSON with a 400 naming the field (%#)', (input, param) => {
    const error = (() => {
      try {
        parseServiceAccount(input, 'key');
      } catch (thrown) {
        return thrown as GatewayError;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).not.toContain('nope');
  });

  it("reads the token and its lifetime, and turns a refusal into a 401 naming the account and Google's reason", () => {
    const account = parseServiceAccount(json, 'key');
    expect(tokenFromAnswer(account, 200, Buffer.from('{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}'), 1000)).toEqual({
      token: 'ya29.x',
      expiresAt: 3_600_000,
    });
    const refused = (() => {
      try {
        tokenFromAnswer(account, 400, Buffer.from('{"error":"invalid_grant","error_description":"Invalid JWT Signature."}'), 0);
      } catch (error) {
        return error as GatewayError;
      }
      throw new Error('accepted');
    })();
    expect(refused.status).toBe(401);
    expect(refused.code).toBe('provider_credential_refused');
    expect(refused.message).toContain('gw@proj.iam.gserviceaccount.com');
    expect(refused.message).toContain('invalid_grant: Invalid JWT Signature.');
    expect(() => tokenFromAnswer(account, 200, Buffer.from('{"access_token":"x"}'), 0)).toThrow(/expires_in/);
  });
});
