/**
 * The mock upstream's vector stores, in OpenAI's wire format, kept in memory per mock
 * server (also under Azure's `/openai/...?api-version=`).
 *
 * Routes
 *   POST/GET /v1/vector_stores                      create / list (newest first, after, limit, has_more)
 *   GET/POST/DELETE /v1/vector_stores/{id}          retrieve / modify / delete
 *   POST /v1/vector_stores/{id}/search              a `vector_store.search_results.page`, one hit per file
 *   POST/GET /v1/vector_stores/{id}/files           add (status "completed") / list
 *   GET/DELETE /v1/vector_stores/{id}/files/{file}  retrieve / remove
 *   POST /v1/vector_stores/{id}/file_batches, GET …/file_batches/{batch}
 * Any file id starting with `file-` is taken as uploaded; others are OpenAI's 404.
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { AZURE_MISSING_API_VERSION_BODY, BAD_JSON_BODY, errorBody } from './mock-openai-chunks';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { sendJson } from './mock-upstream';

const ROUTE = /^(?:\/v1|\/openai)?\/vector_stores(?:\/([^/]+)(?:\/(files|file_batches|search)(?:\/([^/]+))?)?)?$/;
const CREATED = 1_732_000_000;

interface Store {
  object: Record<string, any>;
  files: Map<string, Record<string, any>>;
  batches: Map<string, Record<string, any>>;
}

const storesByServer = new WeakMap<Map<string, number>, Map<string, Store>>();

export function serveOpenAIVectorStores(res: http.ServerResponse, call: MockCall): boolean {
  const route = ROUTE.exec(call.path);
  if (!route) return false;
  if (call.path.startsWith('/openai/') && !new URLSearchParams(call.rawQuery).has('api-version')) {
    sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
    return true;
  }
  if (call.badJson) {
    sendJson(res, 400, BAD_JSON_BODY);
    return true;
  }
  let stores = storesByServer.get(call.flakyFailures);
  if (!stores) storesByServer.set(call.flakyFailures, (stores = new Map()));
  const [, rawStore, sub, rawItem] = route;
  const body = call.body ?? {};
  const reply = (value: unknown) => sendJson(res, 200, JSON.stringify(value));
  const notFound = (what: string, id: string) => sendJson(res, 404, errorBody(`No ${what} found with id '${id}'.`, 'invalid_request_error', null, null));

  if (rawStore === undefined) {
    if (call.method === 'POST') reply(create(stores, body));
    else if (call.method === 'GET') reply(page([...stores.values()].map((s) => s.object).reverse(), call.rawQuery));
    else return false;
    return true;
  }
  const storeId = decodeURIComponent(rawStore);
  const store = stores.get(storeId);
  if (!store) {
    notFound('vector store', storeId);
    return true;
  }
  const item = rawItem === undefined ? undefined : decodeURIComponent(rawItem);

  if (sub === undefined) {
    if (call.method === 'GET') reply(store.object);
    else if (call.method === 'POST') reply(Object.assign(store.object, pick(body, ['name', 'expires_after', 'metadata'])));
    else if (call.method === 'DELETE') {
      stores.delete(storeId);
      reply({ id: storeId, object: 'vector_store.deleted', deleted: true });
    } else return false;
    return true;
  }
  if (sub === 'search' && call.method === 'POST') {
    const data = [...store.files.keys()].map((fileId, index) => ({
      file_id: fileId,
      filename: `${fileId}.txt`,
      score: 0.9 - index * 0.1,
      attributes: {},
      content: [{ type: 'text', text: `A passage of ${fileId} about ${String(body.query)}` }],
    }));
    reply({ object: 'vector_store.search_results.page', search_query: body.query, data, has_more: false, next_page: null });
    return true;
  }
  if (sub === 'files') {
    if (item === undefined && call.method === 'POST') {
      if (typeof body.file_id === 'string' && body.file_id.startsWith('file-')) reply(addFile(store, body.file_id, body.attributes));
      else notFound('file', String(body.file_id));
    } else if (item === undefined && call.method === 'GET') reply(page([...store.files.values()].reverse(), call.rawQuery));
    else if (item !== undefined && !store.files.has(item)) notFound('file', item);
    else if (item !== undefined && call.method === 'GET') reply(store.files.get(item));
    else if (item !== undefined && call.method === 'DELETE') {
      store.files.delete(item);
      refreshCounts(store);
      reply({ id: item, object: 'vector_store.file.deleted', deleted: true });
    } else return false;
    return true;
  }
  if (sub === 'file_batches') {
    if (item === undefined && call.method === 'POST') {
      const ids: string[] = Array.isArray(body.file_ids) ? body.file_ids : [];
      ids.forEach((fileId) => addFile(store, fileId, body.attributes));
      const batch = {
        id: `vsfb_${store.batches.size + 1}${storeId.slice(3)}`,
        object: 'vector_store.files_batch',
        created_at: CREATED,
        vector_store_id: storeId,
        status: 'completed',
        file_counts: counts(ids.length),
      };
      store.batches.set(batch.id, batch);
      reply(batch);
    } else if (item !== undefined && call.method === 'GET') {
      const batch = store.batches.get(item);
      if (batch) reply(batch);
      else notFound('file batch', item);
    } else return false;
    return true;
  }
  return false;
}

function create(stores: Map<string, Store>, body: Record<string, any>): Record<string, any> {
  const id = `vs_mock${String(stores.size + 1).padStart(6, '0')}`;
  const store: Store = {
    object: {
      id,
      object: 'vector_store',
      created_at: CREATED + stores.size,
      name: body.name ?? null,
      usage_bytes: 0,
      file_counts: counts(0),
      status: 'completed',
      expires_after: body.expires_after ?? null,
      expires_at: null,
      last_active_at: CREATED + stores.size,
      metadata: body.metadata ?? {},
    },
    files: new Map(),
    batches: new Map(),
  };
  stores.set(id, store);
  for (const fileId of Array.isArray(body.file_ids) ? body.file_ids : []) addFile(store, fileId, undefined);
  return store.object;
}

function addFile(store: Store, fileId: string, attributes: unknown): Record<string, any> {
  const file = {
    id: fileId,
    object: 'vector_store.file',
    usage_bytes: 1024,
    created_at: CREATED,
    vector_store_id: store.object.id,
    status: 'completed',
    last_error: null,
    chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
    attributes: attributes ?? {},
  };
  store.files.set(fileId, file);
  refreshCounts(store);
  return file;
}

function refreshCounts(store: Store): void {
  store.object.file_counts = counts(store.files.size);
  store.object.usage_bytes = store.files.size * 1024;
}

function counts(completed: number) {
  return { in_progress: 0, completed, failed: 0, cancelled: 0, total: completed };
}

function pick(body: Record<string, any>, fields: string[]): Record<string, any> {
  return Object.fromEntries(fields.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]));
}

/** OpenAI's cursor pages: `after` an id, `limit` (default 20), first_id / last_id / has_more. */
function page(items: Record<string, any>[], rawQuery: string) {
  const query = new URLSearchParams(rawQuery);
  const after = query.get('after');
  const limit = Number(query.get('limit') ?? 20);
  const start = after ? items.findIndex((item) => item.id === after) + 1 : 0;
  const data = items.slice(start, start + limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < items.length };
}
