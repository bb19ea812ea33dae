/**
 * The versions of a config or a prompt as the history page shows and restores them:
 * the versioned body of each, the PATCH that brings one back, and the credentials that
 * restoring could not keep.
 */
import type { ConfigVersion, PromptVersion } from '../api';

export type VersionedKind = 'config' | 'prompt';

/** A version as `GET …/versions` lists it: a config's holds its body in `config`, a prompt's its template's fields. */
export type Version = ConfigVersion | PromptVersion;

/** A version's prompt fields (none for a config's). */
const promptFieldsOf = (version: Version): Partial<PromptVersion> => ('config' in version ? {} : version);

/** The fields of a prompt that make its versions (as the API's PATCH takes them). */
const PROMPT_FIELDS = ['model', 'virtual_key', 'provider', 'messages', 'variables', 'hyperparameters'] as const;

/** What a version holds, to show and compare: a config's body, or a prompt's template. */
export function versionBody(kind: VersionedKind, version: Version): Record<string, unknown> {
  if (kind === 'config') return 'config' in version ? version.config : {};
  const fields = promptFieldsOf(version);
  return Object.fromEntries(PROMPT_FIELDS.filter((field) => fields[field] !== undefined).map((field) => [field, fields[field]]));
}

/**
 * The PATCH that makes a version the latest again (as a new version). A prompt field the
 * old version did not have is sent empty, so it is cleared rather than carried over.
 */
export function restoreBody(kind: VersionedKind, version: Version): Record<string, unknown> {
  if (kind === 'config') return { config: versionBody(kind, version) };
  const body: Record<string, unknown> = {};
  const fields = promptFieldsOf(version);
  for (const field of PROMPT_FIELDS) {
    const value = fields[field];
    if (value !== undefined) body[field] = value;
    else if (field === 'virtual_key' || field === 'provider') body[field] = null;
    else if (field === 'variables' || field === 'hyperparameters') body[field] = {};
  }
  return body;
}

/**
 * Where a config holds credentials, as the gateway finds them: every `api_key`, and every
 * value of a `headers` object. Read back, each is a hint (`sk-…abcd`).
 */
export function credentialPaths(value: unknown, path = '', inHeaders = false): Map<string, string> {
  const found = new Map<string, string>();
  if (Array.isArray(value)) {
    value.forEach((item, i) => credentialPaths(item, `${path}[${i}]`).forEach((v, k) => found.set(k, v)));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if ((inHeaders || key === 'api_key') && typeof inner === 'string') found.set(at, inner);
      else credentialPaths(inner, at, key === 'headers' && !Array.isArray(inner)).forEach((v, k) => found.set(k, v));
    }
  }
  return found;
}

/**
 * The credentials of an old config that restoring cannot keep. The gateway keeps a
 * credential sent back as its hint only when the same hint is stored now at the same
 * place; any other hint would be stored as if it were the credential. Those paths must
 * be typed again (`replacements`) before restoring.
 */
export function lostCredentials(old: Record<string, unknown>, current: Record<string, unknown>): string[] {
  const now = credentialPaths(current);
  return [...credentialPaths(old)].filter(([path, hint]) => now.get(path) !== hint).map(([path]) => path);
}

/** A copy of a config with the credentials at `paths` (as credentialPaths names them) replaced. */
export function withCredentials(config: unknown, replacements: Record<string, string>, path = '', inHeaders = false): unknown {
  if (Array.isArray(config)) return config.map((item, i) => withCredentials(item, replacements, `${path}[${i}]`));
  if (config === null || typeof config !== 'object') return config;
  return Object.fromEntries(
    Object.entries(config).map(([key, inner]) => {
      const at = path ? `${path}.${key}` : key;
      if ((inHeaders || key === 'api_key') && typeof inner === 'string') return [key, replacements[at] ?? inner];
      return [key, withCredentials(inner, replacements, at, key === 'headers' && !Array.isArray(inner))];
    }),
  );
}
