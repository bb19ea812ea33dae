import { IgnoredParams } from './ignored-params';
import { cacheMarkOf, hasAnthropicBreakpoints, ignoreCacheMarks, withAutoBreakpoints } from './prompt-cache';

const MARK = { type: 'ephemeral' };

describe('cacheMarkOf', () => {
  it('reads an ephemeral mark (with its ttl), none when absent, a 400 naming the field otherwise', () => {
    expect(cacheMarkOf({ cache_control: { type: 'ephemeral', ttl: '1h' } }, 'messages[0]')).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(cacheMarkOf({ cache_control: null }, 'messages[0]')).toBeNull();
    expect(cacheMarkOf('text', 'messages[0]')).toBeNull();
    expect(() => cacheMarkOf({ cache_control: { type: 'ephemeral', ttl: '1d' } }, 'messages[1].content[0]')).toThrow(
      expect.objectContaining({ status: 400, param: 'messages[1].content[0].cache_control.ttl' }),
    );
    expect(() => cacheMarkOf({ cache_control: true }, 'messages[2]')).toThrow(expect.objectContaining({ param: 'messages[2].cache_control' }));
  });
});

describe('ignoreCacheMarks', () => {
  it('names message and part marks once each, without indexes', () => {
    const ignored = new IgnoredParams();
    ignoreCacheMarks(
      [
        { role: 'system', content: 'a', cache_control: MARK },
        { role: 'user', content: [{ type: 'text', text: 'b', cache_control: MARK }] },
        { role: 'user', content: [{ type: 'text', text: 'c', cache_control: MARK }], cache_control: MARK },
      ],
      ignored,
    );
    expect(ignored.list()).toEqual(['messages[].cache_control', 'messages[].content[].cache_control']);
    expect(() => ignoreCacheMarks([{ role: 'user', content: 'x', cache_control: MARK }], new IgnoredParams(true))).toThrow(/strict_params/);
  });
});

describe('withAutoBreakpoints', () => {
  it('marks the last tool, the system prompt and the last message, in a copy', () => {
    const body = {
      model: 'claude',
      system: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
      tools: [{ name: 'a' }, { name: 'b' }],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
        { role: 'user', content: 'go on' },
      ],
    };
    const copy = JSON.parse(JSON.stringify(body));
    const marked = withAutoBreakpoints(body);
    expect(body).toEqual(copy);
    expect(marked.tools).toEqual([{ name: 'a' }, { name: 'b', cache_control: MARK }]);
    expect(marked.system).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two', cache_control: MARK },
    ]);
    expect(marked.messages).toEqual([...body.messages.slice(0, 2), { role: 'user', content: [{ type: 'text', text: 'go on', cache_control: MARK }] }]);
    expect(hasAnthropicBreakpoints(marked)).toBe(true);
  });

  it('leaves a body the client marked, and a last block that cannot be marked (thinking)', () => {
    const marked = { model: 'c', messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: MARK }] }] };
    expect(withAutoBreakpoints(marked)).toBe(marked);
    const thinking = { model: 'c', messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }] }] };
    expect(withAutoBreakpoints(thinking).messages).toEqual(thinking.messages);
    expect(withAutoBreakpoints({ model: 'c', system: '', messages: [] })).toEqual({ model: 'c', system: '', messages: [] });
  });
});
