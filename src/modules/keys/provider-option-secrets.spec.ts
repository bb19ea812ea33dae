import { randomBytes } from 'node:crypto';
import { maskSecret, SecretBox } from '../../common/crypto/secret-box';
import { isSecretProviderOption, maskProviderOptions, openProviderOptions, sealClearProviderOptions, sealProviderOptions } from './provider-option-secrets';

describe('secret provider options', () => {
  const box = new SecretBox(randomBytes(32).toString('hex'));

  it.each([
    'aws_session_token',
    'aws_external_id',
    'aws_secret_access_key',
    'AWS_SESSION_TOKEN',
    'client_secret',
    'refresh_token',
    'db_password',
    'vendor_api_key',
    'key',
    'token',
  ])('%s is a secret', (name) => expect(isSecretProviderOption(name)).toBe(true));

  it.each([
    'aws_access_key_id',
    'aws_region',
    'aws_role_arn',
    'api_version',
    'deployment',
    'resource_name',
    'project_id',
    'region',
    'anthropic_beta',
    'keyring',
    'token_uri',
    'monkey',
  ])('%s is not a secret', (name) => expect(isSecretProviderOption(name)).toBe(false));

  const options = {
    aws_region: 'us-east-1',
    aws_access_key_id: 'AKIAEXAMPLE',
    aws_session_token: 'FwoGZXIvYXdzEXAMPLETOKEN',
    aws_external_id: 'ext-1234567890',
  };

  it('seals only the secrets, opens them back, masks them like key_hint', () => {
    const sealed = sealProviderOptions(options, box);
    expect(sealed).toMatchObject({ aws_region: 'us-east-1', aws_access_key_id: 'AKIAEXAMPLE' });
    expect(SecretBox.isSealed(sealed.aws_session_token)).toBe(true);
    expect(SecretBox.isSealed(sealed.aws_external_id)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('EXAMPLETOKEN');
    expect(openProviderOptions(sealed, box)).toEqual(options);
    expect(maskProviderOptions(sealed, box)).toEqual({
      ...options,
      aws_session_token: maskSecret(options.aws_session_token),
      aws_external_id: maskSecret(options.aws_external_id),
    });
  });

  it('keeps the stored secret when the masked hint comes back, replaces it when a new value does', () => {
    const stored = sealProviderOptions(options, box);
    const masked = maskProviderOptions(stored, box);
    const resent = sealProviderOptions({ ...masked, aws_region: 'eu-west-1' }, box, stored);
    expect(resent.aws_session_token).toBe(stored.aws_session_token);
    expect(openProviderOptions(resent, box)).toEqual({ ...options, aws_region: 'eu-west-1' });
    const replaced = sealProviderOptions({ ...masked, aws_session_token: 'a-new-session-token' }, box, stored);
    expect(openProviderOptions(replaced, box).aws_session_token).toBe('a-new-session-token');
    // A hint sent for a secret that was never stored is taken as the value, not as a reference.
    expect(openProviderOptions(sealProviderOptions({ aws_session_token: masked.aws_session_token }, box, {}), box).aws_session_token).toBe(
      masked.aws_session_token,
    );
  });

  it('a secret that looks sealed is still encrypted when sent (an admin never sees ciphertext), but left alone by the migration', () => {
    const lookalike = 'v1.a.b.c';
    expect(SecretBox.isSealed(sealProviderOptions({ client_secret: lookalike }, box).client_secret)).toBe(true);
    expect(sealProviderOptions({ client_secret: lookalike }, box).client_secret).not.toBe(lookalike);
    const sealed = sealProviderOptions(options, box);
    expect(sealClearProviderOptions(sealed, box)).toEqual(sealed);
    expect(openProviderOptions(sealClearProviderOptions(options, box), box)).toEqual(options);
  });

  it('options stored in clear before encryption are opened and masked as they are', () => {
    expect(openProviderOptions(options, box)).toEqual(options);
    expect(maskProviderOptions(options, box).aws_session_token).toBe(maskSecret(options.aws_session_token));
  });
});
