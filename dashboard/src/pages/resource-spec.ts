import type { ComponentChildren } from 'preact';
import type { Kind } from '../names';

/** A resource's title inside a sentence ("API keys", "MCP servers" keep their capitals, "Configs" does not). */
export const titleInText = (spec: { title: string }): string => spec.title.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase());

/**
 * What a resource page (resources.tsx) lists and edits, and its item page (resource-item.tsx)
 * shows: each spec names its row type, the API's generated one (api.ts: every admin object's
 * answer is in the OpenAPI document). `Row`, read loosely, is left for what the document does
 * not type: a form's request body as resource-form-values.ts builds it, field by field from
 * the spec's `FieldSpec`s (names, not types), and the spec's default row.
 */
export type Row = Record<string, any>;

/** The `id` of a row (a slug-named object's UUID, which links from the log name it by), when it has one. */
export const idFieldOf = (row: object): string | undefined => ('id' in row && typeof row.id === 'string' ? row.id : undefined);

export interface FieldSpec {
  name: string;
  label: string;
  kind: 'text' | 'number' | 'select' | 'json' | 'password' | 'datetime' | 'checkbox' | 'list';
  options?: { value: string; label: string }[];
  required?: boolean;
  createOnly?: boolean;
  editOnly?: boolean;
  /** Emptied on edit, it is sent as null (cleared) rather than left out. */
  nullable?: boolean;
  help?: string;
  placeholder?: string;
  json?: 'object' | 'array';
  /** The value a new object's form starts with. */
  initial?: string;
}

export interface ResourceSpec<R extends object = Row> {
  /** The kind of object, as log rows point at it (its page is `/dashboard<KINDS[kind].page>/<id>`). */
  kind: Kind;
  title: string;
  singular: string;
  path: string;
  intro: ComponentChildren;
  idOf: (row: R) => string;
  nameOf: (row: R) => string;
  columns: { label: string; render: (row: R) => ComponentChildren; num?: boolean }[];
  fields: FieldSpec[];
  /** The creation answer holds a secret shown once (API keys). */
  secretOnCreate?: boolean;
  deleteLabel: string;
  empty: string;
  /** Listed and read only: no create, edit or delete (a workspace's own key on the workspaces). */
  readOnly?: boolean;
  /** More of an object on its own page, below its facts (an MCP server's tools). */
  details?: (row: R) => ComponentChildren;
  /** Whether a row offers delete (default: all). */
  deletable?: (row: R) => boolean;
}

/** What the create/edit form reads of a spec: a page with its own list (end users) gives only this. */
export type FormSpec<R extends object = Row> = Pick<ResourceSpec<R>, 'singular' | 'path' | 'idOf' | 'nameOf' | 'fields'>;
