import type { RateWindow } from '../../context/budget-records';
import { tokenSettlementsOf } from './rate-limiter';

const MINUTE = new Date('2026-11-23T00:05:00Z');
const windows: RateWindow[] = [
  { scope: 'api_key', scopeId: 'key-1', limitKey: 'tokens:rpm', windowStart: MINUTE, windowMs: 60_000 },
  { scope: 'virtual_key', scopeId: 'vk-a', limitKey: 'tokens:rph', windowStart: new Date('2026-11-23T00:00:00Z'), windowMs: 3_600_000 },
  { scope: 'workspace', scopeId: 'ws-1', limitKey: 'tokens:rpm', windowStart: MINUTE, windowMs: 60_000 },
];

describe('tokenSettlementsOf', () => {
  it("adds a row's tokens to the windows of the keys it belongs to", () => {
    expect(tokenSettlementsOf(windows, { apiKeyId: 'key-1', virtualKeyId: 'vk-a', workspaceId: 'ws-1', totalTokens: 42 })).toEqual([
      { scope: 'api_key', scope_id: 'key-1', limit_key: 'tokens:rpm', window_start: MINUTE.toISOString(), tokens: 42 },
      { scope: 'virtual_key', scope_id: 'vk-a', limit_key: 'tokens:rph', window_start: '2026-11-23T00:00:00.000Z', tokens: 42 },
      { scope: 'workspace', scope_id: 'ws-1', limit_key: 'tokens:rpm', window_start: MINUTE.toISOString(), tokens: 42 },
    ]);
    expect(tokenSettlementsOf(windows, { apiKeyId: 'key-1', virtualKeyId: 'vk-other', workspaceId: 'ws-2', totalTokens: 7 }).map((s) => s.scope_id)).toEqual([
      'key-1',
    ]);
  });

  it('a row without tokens adds nothing', () => {
    expect(tokenSettlementsOf(windows, { apiKeyId: 'key-1', virtualKeyId: 'vk-a', workspaceId: 'ws-1', totalTokens: null })).toEqual([]);
  });
});
