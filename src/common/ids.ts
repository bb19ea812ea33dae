import { randomBytes, randomUUID } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond timestamp, a 12-bit sequence, then random bits,
 * so ids sort by creation time and the log table can page by primary key. Ids made in
 * the same millisecond count up the sequence (RFC 9562 method 1), so they sort in the
 * order they were made (a request's attempt rows, written together).
 */
const POOL_SIZE = 16 * 256;
let pool = randomBytes(POOL_SIZE);
let offset = 0;
let lastMs = -1;
let sequence = 0;

export function uuidv7(now = Date.now()): string {
  // Random bytes drawn from a pool: one system call per 256 ids, not one per id.
  if (offset + 16 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const bytes = Buffer.from(pool.subarray(offset, (offset += 16)));
  if (now > lastMs) {
    lastMs = now;
    sequence = bytes[7] & 0x7f; // a random start, leaving room to count up
  } else if (now === lastMs && sequence < 0xfff) {
    sequence++;
  }
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const newTraceId = randomUUID;

/** What `x-gateway-trace-id` may hold. */
export const TRACE_ID = /^[\w.:-]{1,128}$/;

/** The request's trace id: the client's `x-gateway-trace-id` when it is a valid one, else `otherwise` (the OpenTelemetry trace's), else a new one. */
export function traceIdFrom(given: unknown, otherwise?: string): string {
  return typeof given === 'string' && TRACE_ID.test(given) ? given : (otherwise ?? newTraceId());
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
