/**
 * Secret `provider_options` of virtual keys (the rule: src/modules/keys/provider-option-secrets.ts)
 * are encrypted at rest, never returned by the admin API, kept when a client sends their masked
 * hint back, and decrypted for routing only: a Bedrock request still signs with the session token.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { maskSecret, SecretBox } from '../../src/common/crypto/secret-box';
import { encryptProviderOptionSecretsMigration } from '../../src/database/migrations/1764001200000-EncryptProviderOptionSecrets';
import { clearAwsCredentialCaches } from '../../src/providers/bedrock/aws-credentials';
import { createVirtualKey, openai } from '../support/e2e-helpers';
import { BEDROCK_TEST_SESSION } from '../support/mock-bedrock';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

const EXTERNAL_ID = 'external-id-3c4d5e6f7a8b';
const VENDOR_SECRET = 'vendor-client-secret-0a1b2c3d4e';
const SECRETS = [BEDROCK_TEST_SESSION.sessionToken, EXTERNAL_ID, VENDOR_SECRET];

describe('secret provider options', () => {
  const encryptionKey = randomBytes(32).toString('hex');
  const box = new SecretBox(encryptionKey);
  let gateway: TestGateway;
  let mock: MockUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    clearAwsCredentialCaches();
    mock = await startMockUpstream();
    gateway = await startTestGateway({ GATEWAY_ENCRYPTION_KEY: encryptionKey });
    client = openai(gateway, {});
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const storedOptions = async (slug: string): Promise<Record<string, string>> =>
    (await gateway.dataSource.query(`select provider_options from virtual_keys where slug = $1`, [slug]))[0].provider_options;
  const storedText = async (slug: string): Promise<string> =>
    (await gateway.dataSource.query(`select provider_options::text as options from virtual_keys where slug = $1`, [slug]))[0].options;
  const expectNoSecret = (value: unknown) => {
    for (const secret of SECRETS) expect(JSON.stringify(value)).not.toContain(secret);
  };
  const signedSessionToken = async (slug: string): Promise<string> => {
    clearAwsCredentialCaches();
    const data = await client.chat.completions.create({ model: `@${slug}/meta.llama3-1-70b-instruct-v1:0`, messages: [{ role: 'user', content: 'hi' }] });
    expect(data.choices[0].message.role).toBe('assistant');
    return mock.requests.at(-1)!.headers['x-amz-security-token'] as string;
  };

  it('are encrypted in the row, masked on every admin read, decrypted to sign a Bedrock request', async () => {
    const options = {
      aws_region: 'us-east-1',
      aws_access_key_id: BEDROCK_TEST_SESSION.accessKeyId,
      aws_session_token: BEDROCK_TEST_SESSION.sessionToken,
      aws_external_id: EXTERNAL_ID,
      vendor_client_secret: VENDOR_SECRET,
    };
    const created = await createVirtualKey(gateway, {
      slug: 'secret-options',
      provider: 'bedrock',
      key: BEDROCK_TEST_SESSION.secretAccessKey,
      custom_host: mock.url,
      provider_options: options,
    });
    const masked = {
      ...options,
      aws_session_token: maskSecret(BEDROCK_TEST_SESSION.sessionToken),
      aws_external_id: maskSecret(EXTERNAL_ID),
      vendor_client_secret: maskSecret(VENDOR_SECRET),
    };
    expect(created.provider_options).toEqual(masked);
    expectNoSecret(created);
    for (const path of ['/v1/virtual-keys/secret-options', `/v1/virtual-keys/${created.id}`, '/v1/virtual-keys']) {
      const read = await admin(gateway, 'GET', path);
      expect(read.status).toBe(200);
      expectNoSecret(read.body);
    }

    const row = await storedOptions('secret-options');
    expectNoSecret(await storedText('secret-options'));
    expect(row).toMatchObject({ aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_SESSION.accessKeyId });
    expect(box.decrypt(row.aws_session_token)).toBe(BEDROCK_TEST_SESSION.sessionToken);
    expect(box.decrypt(row.aws_external_id)).toBe(EXTERNAL_ID);
    expect(box.decrypt(row.vendor_client_secret)).toBe(VENDOR_SECRET);

    expect(await signedSessionToken('secret-options')).toBe(BEDROCK_TEST_SESSION.sessionToken);
  });

  it('a PATCH that sends the masked hints back keeps the stored secrets; a new value replaces one', async () => {
    const read = await admin(gateway, 'GET', '/v1/virtual-keys/secret-options');
    const before = await storedOptions('secret-options');
    const resent = await admin(gateway, 'PATCH', '/v1/virtual-keys/secret-options', { name: 'renamed', provider_options: read.body.provider_options });
    expect(resent.status).toBe(200);
    expect(resent.body.provider_options).toEqual(read.body.provider_options);
    expectNoSecret(resent.body);
    const after = await storedOptions('secret-options');
    expect(after.aws_session_token).toBe(before.aws_session_token);
    expect(box.decrypt(after.aws_external_id)).toBe(EXTERNAL_ID);
    expect(await signedSessionToken('secret-options')).toBe(BEDROCK_TEST_SESSION.sessionToken);

    const replaced = await admin(gateway, 'PATCH', '/v1/virtual-keys/secret-options', {
      provider_options: { ...read.body.provider_options, vendor_client_secret: 'another-client-secret-99' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.provider_options.vendor_client_secret).toBe(maskSecret('another-client-secret-99'));
    expect(JSON.stringify(replaced.body)).not.toContain('another-client-secret-99');
    expect(box.decrypt((await storedOptions('secret-options')).vendor_client_secret)).toBe('another-client-secret-99');
  });

  it('the migration encrypts secrets stored in clear before it, and its down puts them back', async () => {
    await createVirtualKey(gateway, {
      slug: 'legacy-options',
      provider: 'bedrock',
      key: BEDROCK_TEST_SESSION.secretAccessKey,
      custom_host: mock.url,
      provider_options: { aws_region: 'us-east-1' },
    });
    const clear = { aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_SESSION.accessKeyId, aws_session_token: BEDROCK_TEST_SESSION.sessionToken };
    await gateway.dataSource.query(`update virtual_keys set provider_options = $1::jsonb where slug = 'legacy-options'`, [JSON.stringify(clear)]);
    const sealedBefore = await storedOptions('secret-options');

    const Migration = encryptProviderOptionSecretsMigration(encryptionKey);
    const runner = gateway.dataSource.createQueryRunner();
    try {
      await new Migration().up(runner);
      const sealed = await storedOptions('legacy-options');
      expect(sealed).toMatchObject({ aws_region: 'us-east-1', aws_access_key_id: BEDROCK_TEST_SESSION.accessKeyId });
      expect(SecretBox.isSealed(sealed.aws_session_token)).toBe(true);
      expect(box.decrypt(sealed.aws_session_token)).toBe(BEDROCK_TEST_SESSION.sessionToken);
      expectNoSecret(await storedText('legacy-options'));
      // Already sealed values are left as they are.
      expect(await storedOptions('secret-options')).toEqual(sealedBefore);

      await new Migration().down(runner);
      expect(await storedOptions('legacy-options')).toEqual(clear);
      await expect(new (encryptProviderOptionSecretsMigration(undefined))().up(runner)).rejects.toThrow(/GATEWAY_ENCRYPTION_KEY/);
      await new Migration().up(runner);
    } finally {
      await runner.release();
    }
    expect((await admin(gateway, 'GET', '/v1/virtual-keys/legacy-options')).body.provider_options.aws_session_token).toBe(
      maskSecret(BEDROCK_TEST_SESSION.sessionToken),
    );
    expect(await signedSessionToken('legacy-options')).toBe(BEDROCK_TEST_SESSION.sessionToken);
  });
});
