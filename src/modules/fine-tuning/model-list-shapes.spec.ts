import { GatewayError } from '../../common/errors/gateway-error';
import { toAnthropicModel, toAnthropicPage, toOpenAIList, toOpenAIModel } from './model-list-shapes';

const OPENAI_LIST = {
  object: 'list',
  data: ['gpt-4o', 'gpt-4o-mini', 'o3-mini', 'gpt-4.1', 'text-embedding-3-small'].map((id, i) => ({
    id,
    object: 'model',
    created: 1715367049 + i,
    owned_by: 'system',
  })),
};
const ids = (page: { data: { id: string }[] }) => page.data.map((model) => model.id);

describe('model list shapes', () => {
  it("turns an OpenAI model into Anthropic's: created seconds as RFC 3339, the id as display name", () => {
    expect(toAnthropicModel({ id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' })).toEqual({
      type: 'model',
      id: 'gpt-4o',
      display_name: 'gpt-4o',
      created_at: '2024-05-10T18:50:49Z',
    });
  });

  it('dates a model without a usable created at the epoch', () => {
    expect(toAnthropicModel({ id: 'models/gemini-2.5-flash', object: 'model', owned_by: 'google' }).created_at).toBe('1970-01-01T00:00:00Z');
    expect(toAnthropicModel({ id: 'x', created: 'yesterday' }).created_at).toBe('1970-01-01T00:00:00Z');
    expect(toAnthropicModel(null)).toEqual({ type: 'model', id: '', display_name: '', created_at: '1970-01-01T00:00:00Z' });
  });

  it("turns an Anthropic model and list into OpenAI's", () => {
    const claude = { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' };
    expect(toOpenAIModel(claude, 'anthropic')).toEqual({ id: 'claude-sonnet-4-5-20250929', object: 'model', created: 1759104000, owned_by: 'anthropic' });
    expect(toOpenAIList({ data: [claude], has_more: false }, 'anthropic')).toEqual({ object: 'list', data: [toOpenAIModel(claude, 'anthropic')] });
  });

  it('pages the whole OpenAI list by limit and after_id the way Anthropic pages', () => {
    const first = toAnthropicPage(OPENAI_LIST, new URLSearchParams('limit=2'));
    expect(ids(first)).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(first).toMatchObject({ has_more: true, first_id: 'gpt-4o', last_id: 'gpt-4o-mini' });
    const next = toAnthropicPage(OPENAI_LIST, new URLSearchParams('limit=2&after_id=gpt-4o-mini'));
    expect(ids(next)).toEqual(['o3-mini', 'gpt-4.1']);
    const last = toAnthropicPage(OPENAI_LIST, new URLSearchParams('limit=2&after_id=gpt-4.1'));
    expect(last).toMatchObject({ has_more: false, first_id: 'text-embedding-3-small', last_id: 'text-embedding-3-small' });
  });

  it('defaults to pages of 20 and pages backwards with before_id', () => {
    expect(toAnthropicPage(OPENAI_LIST, new URLSearchParams())).toMatchObject({ has_more: false, first_id: 'gpt-4o', last_id: 'text-embedding-3-small' });
    const before = toAnthropicPage(OPENAI_LIST, new URLSearchParams('limit=2&before_id=gpt-4.1'));
    expect(ids(before)).toEqual(['gpt-4o-mini', 'o3-mini']);
    expect(before.has_more).toBe(true);
    expect(toAnthropicPage({ object: 'list', data: [] }, new URLSearchParams())).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
  });

  it('refuses a bad limit, both cursors, or a cursor naming no model, with a 400 naming the parameter', () => {
    const refusal = (query: string) => {
      try {
        toAnthropicPage(OPENAI_LIST, new URLSearchParams(query));
      } catch (error) {
        return error instanceof GatewayError ? [error.status, error.param] : error;
      }
      return null;
    };
    expect(refusal('limit=0')).toEqual([400, 'limit']);
    expect(refusal('limit=1001')).toEqual([400, 'limit']);
    expect(refusal('limit=abc')).toEqual([400, 'limit']);
    expect(refusal('after_id=a&before_id=b')).toEqual([400, 'before_id']);
    expect(refusal('after_id=nope')).toEqual([400, 'after_id']);
  });
});
