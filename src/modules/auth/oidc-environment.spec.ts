import { InvalidEnvironmentError, validateEnvironment } from '../../config/environment';

const problemsOf = (raw: Record<string, string>): string[] => {
  try {
    validateEnvironment(raw);
    return [];
  } catch (error) {
    return (error as InvalidEnvironmentError).problems;
  }
};

describe('single sign-on environment', () => {
  const oidc = { OIDC_ISSUER_URL: 'https://login.example.com', OIDC_CLIENT_ID: 'gw', OIDC_CLIENT_SECRET: 'secret' };

  it('takes the three together, with defaults for the rest', () => {
    const env = validateEnvironment({ ...oidc, OIDC_ROLE_MAPPING: '{"ops": {"role": "owner"}}' });
    expect(env).toMatchObject({ OIDC_GROUPS_CLAIM: 'groups', OIDC_SCOPES: 'openid email profile', SESSION_TTL_HOURS: 12, OIDC_REDIRECT_URI: undefined });
    expect(problemsOf({})).toEqual([]);
  });

  it('names each bad variable', () => {
    expect(problemsOf({ OIDC_ISSUER_URL: 'https://login.example.com' })).toEqual([
      expect.stringMatching(/^OIDC_ISSUER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: set all three/),
    ]);
    expect(problemsOf({ ...oidc, OIDC_ROLE_MAPPING: '{"g": {"role": "boss"}}' })).toEqual([
      expect.stringMatching(/^OIDC_ROLE_MAPPING: group 'g': role must be one of/),
    ]);
    expect(
      problemsOf({
        ...oidc,
        OIDC_ISSUER_URL: 'login.example.com',
        OIDC_SCOPES: 'email',
        SESSION_TTL_HOURS: '0',
        OIDC_REDIRECT_URI: 'https://gw.example.com/cb',
      }),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^OIDC_ISSUER_URL:/),
        expect.stringMatching(/^OIDC_SCOPES:/),
        expect.stringMatching(/^SESSION_TTL_HOURS:/),
        expect.stringMatching(/^OIDC_REDIRECT_URI:/),
      ]),
    );
  });
});
