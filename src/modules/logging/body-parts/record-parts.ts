import { DEFAULT_WORKSPACE_ID } from '../../workspaces/workspace.entity';
import { splitBody, type BodyLayout, type Part } from './body-parts';
import type { PartToStore } from './part-store';

/** Parts remembered as stored; the least recently referenced is forgotten first (~100 bytes each). */
const KNOWN_PARTS_MAX = 100_000;

/**
 * The parts this process knows are stored with `last_seen_day` at least a given day: a
 * row referencing one of them that day needs nothing written for it. A part is learnt
 * only once the statement that stored it has committed (LogWriter), so a failed batch
 * never leaves a reference to a part that is not there.
 */
export class KnownParts {
  private readonly keys = new Map<string, true>();

  constructor(private readonly max = KNOWN_PARTS_MAX) {}

  has(key: string): boolean {
    if (!this.keys.has(key)) return false;
    // Re-inserted: the Map's order is the order of last use.
    this.keys.delete(key);
    this.keys.set(key, true);
    return true;
  }

  learn(keys: readonly string[]): void {
    for (const key of keys) {
      this.keys.delete(key);
      this.keys.set(key, true);
      if (this.keys.size > this.max) this.keys.delete(this.keys.keys().next().value!);
    }
  }

  /** Forgets every part, as a new day does (what the tests use to stand for one). */
  clear(): void {
    this.keys.clear();
  }
}

/** The key of a part in KnownParts: its workspace, its hash and the day it was last referenced. */
export const knownPartKey = (workspaceId: string, hash: string, day: string) => `${workspaceId}/${hash}/${day}`;

export interface RecordWithParts {
  /** The record's JSON: bodies as skeletons, `partHashes`, `partLayout`, `bodyBytes`, and `bodyParts`, the parts to store. */
  json: string;
  /** KnownParts keys of the parts the row references and KnownParts did not hold: learnt once it is stored. */
  partKeys: string[];
  /** The parts carried in `bodyParts`, for an object store (PartStore.put). */
  parts: PartToStore[];
}

/**
 * The log record as the log writer stores it: its bodies split into parts (body-parts.ts),
 * the parts not known to be stored carried along in `bodyParts` (`h` the part's key,
 * `n` its JSON bytes, `b` its JSON) for the same INSERT, and in the journal. The
 * parts' JSON is spliced into the record's text, not serialised a second time.
 */
export function recordWithParts(record: Record<string, unknown> & { workspaceId?: string | null; createdAt?: Date }, known: KnownParts): RecordWithParts {
  const hasBodies = (record.requestBody ?? null) !== null || (record.responseBody ?? null) !== null;
  if (!hasBodies) return { json: JSON.stringify(record), partKeys: [], parts: [] };
  const request = splitBody(record.requestBody);
  const response = splitBody(record.responseBody);
  const parts: Part[] = [...request.parts, ...response.parts];
  const fields: Record<string, unknown> = { ...record, requestBody: undefined, responseBody: undefined, bodyBytes: request.bytes + response.bytes };
  const partKeys = new Set<string>();
  const carried: Part[] = [];
  const workspaceId = record.workspaceId ?? DEFAULT_WORKSPACE_ID;
  if (parts.length) {
    const layout: { request?: BodyLayout; response?: BodyLayout } = {};
    if (request.layout.length) layout.request = request.layout;
    if (response.layout.length) layout.response = response.layout;
    Object.assign(fields, { partHashes: parts.map((part) => part.hash), partLayout: layout });
    const day = (record.createdAt instanceof Date ? record.createdAt : new Date()).toISOString().slice(0, 10);
    for (const part of parts) {
      const key = knownPartKey(workspaceId, part.hash, day);
      if (partKeys.has(key) || known.has(key)) continue;
      partKeys.add(key);
      carried.push(part);
    }
  }
  // The bodies' text spliced in as built by splitBody (JSON.stringify leaves out the undefined ones).
  const spliced = [`"requestBody":${request.skeletonJson}`, `"responseBody":${response.skeletonJson}`];
  if (carried.length) spliced.push(`"bodyParts":[${carried.map((part) => `{"h":"${part.hash}","n":${part.bytes},"b":${part.json}}`).join(',')}]`);
  const json = JSON.stringify(fields);
  return {
    json: `${json.slice(0, -1)}${json.length > 2 ? ',' : ''}${spliced.join(',')}}`,
    partKeys: [...partKeys],
    parts: carried.map((part) => ({ workspaceId, hash: part.hash, json: part.json })),
  };
}
