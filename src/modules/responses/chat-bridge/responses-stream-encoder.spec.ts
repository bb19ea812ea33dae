import type { ChatCompletionChunk, ChatDelta } from '../../../providers/chat-format';
import { ResponsesStreamEncoder } from './responses-stream-encoder';
import { responseSettings } from './chat-to-response';

type Event = Record<string, any>;

/** The events of the frames, each checked to carry its name as the SSE `event:` line. */
function events(frames: string[]): Event[] {
  return frames.map((frame) => {
    const [eventLine, dataLine] = frame.split('\n');
    const event = JSON.parse(dataLine.slice('data: '.length));
    expect(eventLine).toBe(`event: ${event.type}`);
    return event;
  });
}

const chunk = (delta: ChatDelta, finish: string | null = null): ChatCompletionChunk => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'served-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk: ChatCompletionChunk = {
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'served-model',
  choices: [],
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
};

function run(
  chunks: ChatCompletionChunk[],
  encoder = new ResponsesStreamEncoder(responseSettings({ input: 'x' }), 'asked-model'),
): { list: Event[]; encoder: ResponsesStreamEncoder } {
  const frames = chunks.flatMap((c) => encoder.onChunk(c));
  frames.push(...encoder.finish());
  const list = events(frames);
  expect(list.map((event) => event.sequence_number)).toEqual(list.map((_, i) => i));
  return { list, encoder };
}

describe('ResponsesStreamEncoder', () => {
  it('writes text as OpenAI writes a message, ending with response.completed carrying usage', () => {
    const { list, encoder } = run([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }, 'stop'), usageChunk]);
    expect(list.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[0].response).toMatchObject({ object: 'response', status: 'in_progress', model: 'served-model', output: [], usage: null });
    expect(list[2]).toMatchObject({ output_index: 0, item: { type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    const itemId = list[2].item.id;
    expect(list[4]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, delta: 'Hel' });
    expect(list[6]).toMatchObject({ item_id: itemId, text: 'Hello' });
    expect(list[7].part).toEqual({ type: 'output_text', annotations: [], logprobs: [], text: 'Hello' });
    expect(list[8].item).toMatchObject({ id: itemId, status: 'completed', content: [{ type: 'output_text', text: 'Hello' }] });
    const final = list[9].response;
    expect(final).toMatchObject({ status: 'completed', output: [list[8].item], usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } });
    expect(final.id).toBe(list[0].response.id);
    expect(encoder.response()).toEqual(final);
  });

  it('writes reasoning, then text, then two tool calls as separate items with their argument fragments', () => {
    const { list } = run([
      chunk({ reasoning_content: 'Think' }),
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }, 'tool_calls'),
    ]);
    const types = list.map((event) => event.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[7].item).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think' }] });
    expect(list[14]).toMatchObject({ output_index: 2, item: { type: 'function_call', status: 'in_progress', call_id: 'call_a', name: 'f', arguments: '' } });
    expect(list[17]).toMatchObject({ output_index: 2, name: 'f', arguments: '{"x":1}' });
    expect(list[19].item).toMatchObject({ call_id: 'call_b', name: 'g' });
    expect(list.at(-1)!.response.output.map((item: Event) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
  });

  it('ends with response.incomplete at the output limit', () => {
    const { list } = run([chunk({ content: 'one two' }, 'length')]);
    const last = list.at(-1)!;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
  });

  it('writes a refusal as a refusal part', () => {
    const { list } = run([chunk({ refusal: 'No.' })]);
    expect(list.map((event) => event.type)).toContain('response.refusal.delta');
    expect(list.find((event) => event.type === 'response.refusal.done')).toMatchObject({ refusal: 'No.' });
  });

  it('names a namespaced function as declared', () => {
    const encoder = new ResponsesStreamEncoder(responseSettings({ input: 'x' }), 'm', new Map([['agents__spawn', { namespace: 'agents', name: 'spawn' }]]));
    const { list } = run([chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'agents__spawn', arguments: '{}' } }] })], encoder);
    expect(list.find((event) => event.type === 'response.output_item.done')!.item).toMatchObject({ name: 'spawn', namespace: 'agents' });
  });

  it('still opens and closes the response when the stream had no chunk, and shows a cut stream as in progress', () => {
    expect(run([]).list.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    const cut = new ResponsesStreamEncoder(responseSettings({ input: 'x' }), 'm');
    cut.onChunk(chunk({ content: 'par' }));
    expect(cut.response()).toMatchObject({ status: 'in_progress', output: [{ type: 'message', content: [{ text: 'par' }] }] });
    expect(cut.nextSequence()).toBe(5);
  });
});
