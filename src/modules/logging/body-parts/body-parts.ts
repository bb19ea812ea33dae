import { createHash } from 'node:crypto';

/**
 * A logged body as its parts (CONTRACT section 14): the values an agent resends on every
 * turn (the system prompt, the tool definitions, each message or input item, each
 * choice or content block of an answer) are stored once per workspace, keyed by the
 * SHA-256 of their JSON text, and the row keeps the rest of the body (its skeleton) with
 * a layout that says where each part goes back.
 *
 * A part's key is the first 128 bits of its SHA-256, written as a UUID: a row names dozens
 * of parts, and PostgreSQL keeps a `uuid[]` at 16 bytes an element where a `bytea[]` of
 * whole hashes takes 36. A collision by chance needs about 2^64 parts of one workspace;
 * one made on purpose could only merge two bodies of its maker's own workspace.
 *
 * The parts are found by top-level field, whatever the wire format: a field of
 * WHOLE_FIELDS is one part, each element of an array under EACH_FIELDS is one. A value
 * shorter than MIN_PART_BYTES stays in the skeleton (a reference would cost more than
 * it saves); past MAX_PARTS_PER_BODY the rest stays in the skeleton too, so a hostile
 * body of tens of thousands of messages costs one pass over it, no more.
 */

/** Fields whose whole value is one part: repeated as a block from request to request. */
const WHOLE_FIELDS = ['system', 'tools', 'instructions', 'functions', 'systemInstruction', 'tool_config', 'toolConfig'];
/** Fields whose array elements are parts: a conversation grows by appending to them. */
const EACH_FIELDS = ['messages', 'input', 'contents', 'content', 'choices', 'output', 'candidates'];
/** Under this many bytes of JSON a value stays in the row: a reference costs about 40. */
export const MIN_PART_BYTES = 64;
export const MAX_PARTS_PER_BODY = 5_000;

/** A part's key: the first 128 bits of its SHA-256, as a UUID. */
export type PartHash = string;

export interface Part {
  hash: PartHash;
  /** The part's JSON text, as hashed. */
  json: string;
  /** Its length in bytes (UTF-8). */
  bytes: number;
}

/**
 * Where a body's parts go back, in the order of its hashes: `[field]` is one part (the
 * field's whole value), `[field, [i, j, …]]` one part per listed index of the field's array.
 */
export type BodyLayout = ([string] | [string, number[]])[];

export interface SplitBody {
  /**
   * The JSON text of the body without its parts (array elements that are parts are null in
   * place), built from the pieces serialised to find the parts: a logged body is serialised
   * once, parts or not. `null` for no body.
   */
  skeletonJson: string;
  layout: BodyLayout;
  parts: Part[];
  /** The body's JSON length in bytes, as received: what storage is measured against. */
  bytes: number;
}

export function hashPart(json: string): PartHash {
  const hex = createHash('sha256').update(json).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The body as skeleton, layout and parts; a body that is not an object has no part. */
export function splitBody(body: unknown): SplitBody {
  if (body === null || body === undefined || typeof body !== 'object' || Array.isArray(body)) {
    const json = JSON.stringify(body ?? null);
    return { skeletonJson: json, layout: [], parts: [], bytes: body == null ? 0 : Buffer.byteLength(json) };
  }
  const layout: BodyLayout = [];
  const parts: Part[] = [];
  /** `"field":value` of each field the skeleton keeps. */
  const kept: string[] = [];
  const room = () => parts.length < MAX_PARTS_PER_BODY;
  const asPart = (json: string): Part => {
    const part = { hash: hashPart(json), json, bytes: Buffer.byteLength(json) };
    parts.push(part);
    return part;
  };
  let bytes = 1; // the braces, less the comma counted after the last field

  for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
    const json = EACH_FIELDS.includes(field) && Array.isArray(value) ? null : JSON.stringify(value);
    if (json === undefined) continue; // undefined, a function: not in the JSON
    const key = JSON.stringify(field);
    bytes += Buffer.byteLength(key) + 2; // the colon and the comma
    if (json === null) {
      // An array of EACH_FIELDS, element by element: its JSON is theirs, commas and brackets apart.
      const elements = (value as unknown[]).map((element) => JSON.stringify(element) ?? 'null');
      const indices: number[] = [];
      bytes += Math.max(elements.length - 1, 0) + 2;
      elements.forEach((elementJson, index) => {
        if (elementJson.length >= MIN_PART_BYTES && (elementJson[0] === '{' || elementJson[0] === '[') && room()) {
          bytes += asPart(elementJson).bytes;
          indices.push(index);
          elements[index] = 'null';
        } else bytes += Buffer.byteLength(elementJson);
      });
      if (indices.length) layout.push([field, indices]);
      kept.push(`${key}:[${elements.join(',')}]`);
    } else if (WHOLE_FIELDS.includes(field) && json.length >= MIN_PART_BYTES && room()) {
      bytes += asPart(json).bytes;
      layout.push([field]);
    } else {
      bytes += Buffer.byteLength(json);
      kept.push(`${key}:${json}`);
    }
  }
  return { skeletonJson: `{${kept.join(',')}}`, layout, parts, bytes: Math.max(bytes, 2) };
}

/** How many parts a layout places (the length of its body's hashes). */
export function partCount(layout: BodyLayout): number {
  return layout.reduce((count, [, indices]) => count + (indices ? indices.length : 1), 0);
}

/**
 * The body again: the skeleton with each part put back where the layout says. A part the
 * store could not give (`read` answers undefined) reads `{"_missing_part": "<hash>"}`.
 */
export function joinBody(skeleton: unknown, layout: BodyLayout, hashes: readonly PartHash[], read: (hash: PartHash) => unknown): unknown {
  if (layout.length === 0 || skeleton === null || typeof skeleton !== 'object' || Array.isArray(skeleton)) return skeleton;
  const body: Record<string, unknown> = { ...(skeleton as Record<string, unknown>) };
  let next = 0;
  const part = () => {
    const hash = hashes[next++];
    const value = hash === undefined ? undefined : read(hash);
    return value === undefined ? { _missing_part: hash ?? null } : value;
  };
  for (const [field, indices] of layout) {
    if (!indices) {
      body[field] = part();
      continue;
    }
    const elements = Array.isArray(body[field]) ? [...(body[field] as unknown[])] : [];
    for (const index of indices) elements[index] = part();
    body[field] = elements;
  }
  return body;
}
