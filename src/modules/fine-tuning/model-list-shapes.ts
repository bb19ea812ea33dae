import { GatewayError } from '../../common/errors/gateway-error';

/** One model in Anthropic's Models API. */
export interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

/** A page of Anthropic's model list. */
export interface AnthropicModelPage {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** Anthropic's page size when `limit` is absent, and its bounds. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An OpenAI model object (`{id, object: "model", created, owned_by}`) in Anthropic's
 * shape: `created` (Unix seconds) as RFC 3339, the id as the display name (OpenAI's
 * list has no other). A missing or unreadable `created` is the epoch: Anthropic's field
 * is required, and the epoch reads as "unknown" rather than as a real date.
 */
export function toAnthropicModel(model: unknown): AnthropicModel {
  const object = isObject(model) ? model : {};
  const id = typeof object.id === 'string' ? object.id : String(object.id ?? '');
  const seconds = typeof object.created === 'number' && Number.isFinite(object.created) && object.created >= 0 ? object.created : 0;
  return { type: 'model', id, display_name: id, created_at: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') };
}

/** An Anthropic model in OpenAI's shape (`created_at` → Unix seconds, owned by the provider). */
export function toOpenAIModel(model: unknown, ownedBy: string): { id: string; object: 'model'; created: number; owned_by: string } {
  const object = isObject(model) ? model : {};
  const millis = typeof object.created_at === 'string' ? Date.parse(object.created_at) : NaN;
  return { id: String(object.id ?? ''), object: 'model', created: Number.isFinite(millis) ? Math.floor(millis / 1000) : 0, owned_by: ownedBy };
}

/** An Anthropic model list in OpenAI's shape. */
export function toOpenAIList(list: unknown, ownedBy: string): { object: 'list'; data: ReturnType<typeof toOpenAIModel>[] } {
  const data = isObject(list) && Array.isArray(list.data) ? list.data : [];
  return { object: 'list', data: data.map((model) => toOpenAIModel(model, ownedBy)) };
}

/**
 * An OpenAI model list (the whole list: OpenAI's has no pages) as one page of Anthropic's,
 * paged here by Anthropic's query: `limit` (default 20, 1…1000), `after_id` (the page
 * after that model) or `before_id` (the page right before it), in the provider's order.
 * An unknown cursor is a 400, as a cursor into nothing has no page.
 */
export function toAnthropicPage(list: unknown, query: URLSearchParams): AnthropicModelPage {
  const all = (isObject(list) && Array.isArray(list.data) ? list.data : []).map(toAnthropicModel);
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw GatewayError.invalidRequest(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  const beforeId = query.get('before_id');
  const afterId = query.get('after_id');
  if (beforeId !== null && afterId !== null) throw GatewayError.invalidRequest('Give before_id or after_id, not both', 'before_id');
  const indexOf = (id: string, param: string) => {
    const index = all.findIndex((model) => model.id === id);
    if (index === -1) throw GatewayError.invalidRequest(`${param} names no model of this list: ${id}`, param);
    return index;
  };
  let data: AnthropicModel[];
  let hasMore: boolean;
  if (beforeId !== null) {
    const end = indexOf(beforeId, 'before_id');
    const start = Math.max(0, end - limit);
    data = all.slice(start, end);
    hasMore = start > 0;
  } else {
    const start = afterId !== null ? indexOf(afterId, 'after_id') + 1 : 0;
    data = all.slice(start, start + limit);
    hasMore = start + limit < all.length;
  }
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
