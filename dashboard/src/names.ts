import { useEffect, useState } from 'preact/hooks';
import { api } from './api';

/** The admin objects a log row points at by id, and where each is read and shown. */
export const KINDS = {
  'api-key': { api: '/v1/api-keys', page: '/api-keys', label: 'API key' },
  'virtual-key': { api: '/v1/virtual-keys', page: '/virtual-keys', label: 'virtual key' },
  config: { api: '/v1/configs', page: '/configs', label: 'config' },
  prompt: { api: '/v1/prompts', page: '/prompts', label: 'prompt' },
} as const;
export type Kind = keyof typeof KINDS;

export interface Named {
  name: string;
  /** The dashboard path of the object's own page. */
  page: string;
}

/**
 * One read per object while the page is open: every log detail that names the same key
 * shares it. A failed read (404 for a deleted object, no network) is remembered as null,
 * so the id is shown and not asked for again on each row.
 */
const cache = new Map<string, Promise<Named | null>>();

export function lookUpName(kind: Kind, id: string): Promise<Named | null> {
  const key = `${kind}:${id}`;
  let found = cache.get(key);
  if (!found) {
    const { api: path, page } = KINDS[kind];
    found = api<{ id: string; name?: string; slug?: string }>('GET', `${path}/${encodeURIComponent(id)}`).then(
      // Virtual keys, configs and prompts have their pages by slug, API keys by id.
      (row) => ({ name: row.name || row.slug || id, page: `${page}/${encodeURIComponent(row.slug ?? row.id)}` }),
      () => null,
    );
    cache.set(key, found);
  }
  return found;
}

/** Forgets the names of a kind of object (one of them was renamed or deleted on its page). */
export function forgetNames(kind: Kind): void {
  for (const key of cache.keys()) if (key.startsWith(`${kind}:`)) cache.delete(key);
}

/** The name of an object: undefined while it is read, null when it could not be. */
export function useName(kind: Kind, id: string): Named | null | undefined {
  const [named, setNamed] = useState<Named | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    setNamed(undefined);
    void lookUpName(kind, id).then((result) => live && setNamed(result));
    return () => {
      live = false;
    };
  }, [kind, id]);
  return named;
}
