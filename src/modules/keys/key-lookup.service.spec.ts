import type { ConfigService } from '@nestjs/config';
import type { Repository } from 'typeorm';
import { SecretBox, sha256 } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import { KeyLookupService } from './key-lookup.service';

const WS = '00000000-0000-4000-8000-000000000001';

/** A table's findOneBy over rows matched on one column, with a switch for an outage. */
function fakeTable(column: string) {
  const table = {
    rows: new Map<string, Record<string, unknown>>(),
    down: false,
    repository: {
      findOneBy: async (where: Record<string, unknown>) => {
        if (table.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        const row = table.rows.get(where[column] as string);
        return row && (where.workspaceId === undefined || row.workspaceId === where.workspaceId) ? row : null;
      },
    } as unknown as Repository<any>,
  };
  return table;
}

describe('KeyLookupService through a flood of bad keys', () => {
  it('still serves the API keys and virtual keys in use when the database goes away after it', async () => {
    const [apiKeys, virtualKeys] = [fakeTable('keyHash'), fakeTable('slug')];
    apiKeys.rows.set(sha256('sk-in-use'), {
      id: 'key-1',
      name: 'in use',
      role: 'user',
      expiresAt: null,
      metadata: {},
      budgetLimitUsd: null,
      budgetPeriod: null,
      rateLimits: [],
    });
    virtualKeys.rows.set('openai-prod', {
      id: 'vk-1',
      workspaceId: WS,
      slug: 'openai-prod',
      provider: 'openai',
      encryptedKey: null,
      providerOptions: {},
      budgetLimitUsd: null,
      budgetPeriod: null,
    });
    const config = { get: () => 60_000 } as unknown as ConfigService<any, true>;
    const unused = {} as Repository<any>;
    const lookup = new KeyLookupService(apiKeys.repository, virtualKeys.repository, unused, unused, new SecretBox('07'.repeat(32)), config);

    expect(await lookup.apiKeyBySecret('sk-in-use')).toMatchObject({ id: 'key-1' });
    expect(await lookup.virtualKey(WS, 'openai-prod')).toMatchObject({ id: 'vk-1' });
    // Another workspace's slug is not found (and not served from the first workspace's entry).
    expect(await lookup.virtualKey('00000000-0000-4000-8000-000000000002', 'openai-prod')).toBeNull();
    for (let i = 0; i < 12_000; i++) {
      expect(await lookup.apiKeyBySecret(`sk-scanner-${i}`)).toBeNull();
      expect(await lookup.virtualKey(WS, `made-up-${i}`)).toBeNull();
    }

    apiKeys.down = virtualKeys.down = true;
    lookup.expireAll(); // as after the key-change listener reconnects
    expect(await lookup.apiKeyBySecret('sk-in-use')).toMatchObject({ id: 'key-1' });
    expect(await lookup.virtualKey(WS, 'openai-prod')).toMatchObject({ id: 'vk-1' });
    await expect(lookup.apiKeyBySecret('sk-never-seen')).rejects.toBeInstanceOf(GatewayError);
  });
});
