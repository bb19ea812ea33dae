import { maskForAudit } from './audit-masking';

describe('maskForAudit', () => {
  it('masks credentials by name, header values and gateway keys anywhere; keeps hints and slugs', () => {
    const masked = maskForAudit({
      key: 'gk-abcdefghijklmnopqrstuvwxyz',
      key_hint: 'gk-…wxyz',
      default_virtual_key: 'openai-prod',
      provider_options: { aws_secret_access_key: 'AKSECRETSECRETSECRET', aws_access_key_id: 'AKIAIDENTITY' },
      config: { targets: [{ api_key: 'sk-live-0123456789abcdef', virtual_key: 'vk-slug' }] },
      headers: { 'X-Custom': 'plain-value-123456' },
      note: 'created with gk-zyxwvutsrqponmlkjihgfedcba inside',
      nested: [{ password: '…' }],
    }) as any;
    expect(masked).toEqual({
      key: 'gk-…wxyz',
      key_hint: 'gk-…wxyz',
      default_virtual_key: 'openai-prod',
      provider_options: { aws_secret_access_key: 'AKS…CRET', aws_access_key_id: 'AKIAIDENTITY' },
      config: { targets: [{ api_key: 'sk-…cdef', virtual_key: 'vk-slug' }] },
      headers: { 'X-Custom': 'pla…3456' },
      note: 'created with gk-…dcba inside',
      nested: [{ password: '…' }],
    });
    expect(JSON.stringify(masked)).not.toMatch(/abcdefghijkl|sk-live-0123|SECRETSECRET|plain-value/);
  });

  it('leaves scalars, null and numbers alone', () => {
    expect(maskForAudit(null)).toBeNull();
    expect(maskForAudit({ budget_limit_usd: 5, disabled: false, expires_at: null })).toEqual({ budget_limit_usd: 5, disabled: false, expires_at: null });
  });
});
