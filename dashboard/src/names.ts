import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';

/** The admin objects a log row points at by id, and where each is read and shown. */
export const KINDS = {
  'api-key': { api: '/v1/api-keys', page: '/api-keys', label: 'API key' },
  'virtual-key': { api: '/v1/virtual-keys', page: '/virtual-keys', label: 'virtual key' },
  config: { api: '/v1/configs', page: '/configs', label: 'config' },
  prompt: { api: '/v1/prompts', page: '/prompts', label: 'prompt' },
  workspace: { api: '/v1/workspaces', page: '/workspaces', label: 'workspace' },
  'end-user': { api: '/v1/end-users', page: '/end-users', label: 'end user' },
  'mcp-server': { api: '/v1/mcp-servers', page: '/mcp-servers', label: 'MCP server' },
} as const;
export type Kind = keyof typeof KINDS;

export interface Named {
  name: string;
  /** The dashboard path of the object's own page. */
  page: string;
}

/** Why a name is not known: the object is gone (404), or it could not be read now. */
export type Unnamed = { missing: true } | { missing: false; reason: string };

/**
 * One read per object while the page is open: every log detail that names the same key
 * shares it. A 404 (a deleted object) is remembered too, so it is not asked for again on
 * each row; any other failure is forgotten, to be tried again by the next detail.
 */
const cache = new Map<string, Promise<Named | Unnamed>>();

export function lookUpName(kind: Kind, id: string): Promise<Named | Unnamed> {
  const key = `${kind}:${id}`;
  let found = cache.get(key);
  if (!found) {
    const { api: path, page } = KINDS[kind];
    found = api<{ id: string; name?: string; slug?: string }>('GET', `${path}/${encodeURIComponent(id)}`).then(
      // Virtual keys, configs and prompts have their pages by slug, API keys by id.
      (row): Named => ({ name: row.name || row.slug || id, page: `${page}/${encodeURIComponent(row.slug ?? row.id)}` }),
      (e: ApiError): Unnamed => {
        if (e.status === 404) return { missing: true };
        cache.delete(key);
        return { missing: false, reason: e.message };
      },
    );
    cache.set(key, found);
  }
  return found;
}

/** Forgets the names of a kind of object (one of them was renamed or deleted on its page). */
export function forgetNames(kind: Kind): void {
  for (const key of cache.keys()) if (key.startsWith(`${kind}:`)) cache.delete(key);
}

/** The name of an object: undefined while it is read. */
export function useName(kind: Kind, id: string): Named | Unnamed | undefined {
  const [named, setNamed] = useState<Named | Unnamed | undefined>(undefined);
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
