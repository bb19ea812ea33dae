import { isUuid, traceIdFrom, uuidv7 } from './ids';

describe('uuidv7', () => {
  it('is a version 7 UUID carrying the millisecond it was made', () => {
    const id = uuidv7(1_764_000_000_123);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(1_764_000_000_123);
  });

  it('sorts ids made in the same millisecond in the order they were made', () => {
    const now = Date.now() + 60_000;
    const ids = Array.from({ length: 200 }, () => uuidv7(now));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('traceIdFrom', () => {
  it('takes a valid x-gateway-trace-id, else the OpenTelemetry trace id given, else a new UUID', () => {
    expect(traceIdFrom('session-42', 'a'.repeat(32))).toBe('session-42');
    expect(traceIdFrom('not valid!', 'a'.repeat(32))).toBe('a'.repeat(32));
    expect(traceIdFrom(undefined, 'b'.repeat(32))).toBe('b'.repeat(32));
    expect(traceIdFrom(undefined)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
