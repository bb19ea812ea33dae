import type { ConfigService } from '@nestjs/config';
import type { Repository } from 'typeorm';
import { SecretBox, sha256 } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ApiKeyEntity } from './entities/api-key.entity';
import { KeyLookupService } from './key-lookup.service';

/** The api_keys table as the look-ups see it: rows by hash, a switch for an outage, a count of queries. */
function fakeApiKeys() {
  const rows = new Map<string, Partial<ApiKeyEntity>>();
  const table = {
    down: false,
    queries: 0,
    /** A query to hold open (resolve it to answer), instead of answering at once. */
    held: null as null | ((row: Partial<ApiKeyEntity> | null) => void),
    hold: false,
    add(secret: string) {
      rows.set(sha256(secret), { id: `id-${secret}`, name: secret, role: 'user', expiresAt: null, metadata: {}, budgetLimitUsd: null, budgetPeriod: null, rateLimits: [] });
    },
    remove(secret: string) {
      rows.delete(sha256(secret));
    },
    repository: {
      findOneBy: async ({ keyHash }: { keyHash: string }) => {
        table.queries++;
        if (table.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        if (table.hold) return new Promise((resolve) => (table.held = resolve));
        return rows.get(keyHash) ?? null;
      },
    },
  };
  return table;
}

function lookupOver(apiKeys: ReturnType<typeof fakeApiKeys>): KeyLookupService {
  const config = { get: () => 60_000 } as unknown as ConfigService<any, true>;
  const unused = {} as Repository<any>;
  return new KeyLookupService(apiKeys.repository as unknown as Repository<ApiKeyEntity>, unused, unused, unused, new SecretBox('07'.repeat(32)), config);
}

describe('KeyLookupService: API keys', () => {
  it('keeps known keys through a flood of unknown ones, so an outage after it still serves them', async () => {
    const apiKeys = fakeApiKeys();
    const lookup = lookupOver(apiKeys);
    apiKeys.add('sk-known');
    expect(await lookup.apiKeyBySecret('sk-known')).toMatchObject({ id: 'id-sk-known' });
    for (let i = 0; i < 25_000; i++) expect(await lookup.apiKeyBySecret(`sk-scanner-${i}`)).toBeNull();

    apiKeys.down = true;
    lookup.invalidateApiKeys(); // a key change announced just before the outage: the known key must reload, and falls back
    expect(await lookup.apiKeyBySecret('sk-known')).toMatchObject({ id: 'id-sk-known' });
    await expect(lookup.apiKeyBySecret('sk-never-seen')).rejects.toBeInstanceOf(GatewayError);
  });

  it('answers an unknown key from memory for a while, and asks again after a key change', async () => {
    const apiKeys = fakeApiKeys();
    const lookup = lookupOver(apiKeys);
    expect(await lookup.apiKeyBySecret('sk-later')).toBeNull();
    expect(await lookup.apiKeyBySecret('sk-later')).toBeNull();
    expect(apiKeys.queries).toBe(1);

    apiKeys.add('sk-later');
    lookup.invalidateApiKeys();
    expect(await lookup.apiKeyBySecret('sk-later')).toMatchObject({ id: 'id-sk-later' });
  });

  it('does not remember a miss that a key change overtook (the key may have just been made)', async () => {
    const apiKeys = fakeApiKeys();
    const lookup = lookupOver(apiKeys);
    apiKeys.hold = true;
    const miss = lookup.apiKeyBySecret('sk-new');
    await Promise.resolve();
    apiKeys.add('sk-new');
    lookup.invalidateApiKeys();
    apiKeys.held!(null); // read before the key was committed
    expect(await miss).toBeNull();

    apiKeys.hold = false;
    expect(await lookup.apiKeyBySecret('sk-new')).toMatchObject({ id: 'id-sk-new' });
  });

  it('stops serving a revoked key, even from memory when the database then goes away', async () => {
    const apiKeys = fakeApiKeys();
    const lookup = lookupOver(apiKeys);
    apiKeys.add('sk-revoked');
    expect(await lookup.apiKeyBySecret('sk-revoked')).not.toBeNull();
    apiKeys.remove('sk-revoked');
    lookup.invalidateApiKeys();
    expect(await lookup.apiKeyBySecret('sk-revoked')).toBeNull();

    apiKeys.down = true;
    expect(await lookup.apiKeyBySecret('sk-revoked')).toBeNull();
  });
});
