import { hashPart, joinBody, MAX_PARTS_PER_BODY, MIN_PART_BYTES, partCount, splitBody } from './body-parts';
import { KnownParts, knownPartKey, recordWithParts } from './record-parts';

const long = (label: string) => `${label} ${'lorem ipsum '.repeat(10)}`;
const conversation = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: [{ type: 'text', text: long('You are a coding agent.') }],
  tools: [{ name: 'Bash', description: long('Runs a command'), input_schema: { type: 'object' } }],
  messages: [
    { role: 'user', content: long('List the files') },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: long('a.ts b.ts') }] },
  ],
  stream: true,
};

/** Joins a split body again from its own parts. */
function roundTrip(body: unknown): unknown {
  const { skeletonJson, layout, parts } = splitBody(body);
  const skeleton = JSON.parse(skeletonJson);
  const byHash = new Map(parts.map((part) => [part.hash, JSON.parse(part.json)]));
  return joinBody(
    skeleton,
    layout,
    parts.map((part) => part.hash),
    (hash) => byHash.get(hash),
  );
}

describe('splitBody and joinBody', () => {
  it('takes the system prompt and the tools whole, each message of the conversation apart, and puts them back', () => {
    const { skeletonJson, layout, parts, bytes } = splitBody(conversation);
    const skeleton = JSON.parse(skeletonJson);
    expect(layout).toEqual([['system'], ['tools'], ['messages', [0, 2]]]);
    expect(parts.map((part) => JSON.parse(part.json))).toEqual([conversation.system, conversation.tools, conversation.messages[0], conversation.messages[2]]);
    expect(parts[0].hash).toBe(hashPart(JSON.stringify(conversation.system)));
    // A message shorter than a reference stays in place; the others leave a null.
    expect(skeleton).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [null, { role: 'assistant', content: 'ok' }, null], stream: true });
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(conversation)));
    expect(roundTrip(conversation)).toEqual(conversation);
    expect(partCount(layout)).toBe(parts.length);
  });

  it('splits an answer by content block, choice or output item', () => {
    const answer = {
      id: 'msg_1',
      content: [
        { type: 'text', text: long('Hello') },
        { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: long('ls') } },
      ],
    };
    expect(splitBody(answer).layout).toEqual([['content', [0, 1]]]);
    expect(roundTrip(answer)).toEqual(answer);
    const chat = { choices: [{ index: 0, message: { role: 'assistant', content: long('Hi') } }], usage: { prompt_tokens: 1 } };
    expect(splitBody(chat).layout).toEqual([['choices', [0]]]);
    expect(roundTrip(chat)).toEqual(chat);
  });

  it('leaves bodies without parts as they are: small ones, non-objects, string inputs', () => {
    for (const body of [null, 'text', [1, 2], { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { input: long('a string input') }]) {
      const split = splitBody(body);
      expect(split.parts).toEqual([]);
      expect(JSON.parse(split.skeletonJson)).toEqual(body);
      expect(split.skeletonJson).toBe(JSON.stringify(body));
      expect(roundTrip(body)).toEqual(body);
    }
    expect(splitBody({}).bytes).toBe(2);
  });

  it(`stops at ${MAX_PARTS_PER_BODY} parts: the rest of a hostile body stays in place`, () => {
    const messages = Array.from({ length: MAX_PARTS_PER_BODY + 100 }, (_, i) => ({ role: 'user', content: `message ${i} ${'x'.repeat(MIN_PART_BYTES)}` }));
    const tiny = Array.from({ length: 20_000 }, () => ({ role: 'user', content: 'hi' }));
    const { parts, skeletonJson } = splitBody({ messages, tools: messages.slice(0, 3) });
    const skeleton = JSON.parse(skeletonJson);
    expect(parts).toHaveLength(MAX_PARTS_PER_BODY);
    expect((skeleton as { messages: unknown[] }).messages.slice(MAX_PARTS_PER_BODY)).toEqual(messages.slice(MAX_PARTS_PER_BODY));
    expect((skeleton as { tools: unknown }).tools).toEqual(messages.slice(0, 3));
    expect(roundTrip({ messages })).toEqual({ messages });
    expect(splitBody({ messages: tiny }).parts).toEqual([]);
  });

  it('reads a part the store could not give as {"_missing_part": hash}, and a layout longer than its hashes too', () => {
    const { skeletonJson, layout, parts } = splitBody(conversation);
    const skeleton = JSON.parse(skeletonJson);
    const hashes = parts.map((part) => part.hash);
    const joined = joinBody(skeleton, layout, hashes, (hash) =>
      hash === hashes[1] ? undefined : JSON.parse(parts.find((part) => part.hash === hash)!.json),
    ) as typeof conversation;
    expect(joined.tools).toEqual({ _missing_part: hashes[1] });
    expect(joined.system).toEqual(conversation.system);
    expect((joinBody(skeleton, layout, hashes.slice(0, 2), () => ({})) as typeof conversation).messages[2]).toEqual({ _missing_part: null });
  });
});

describe('recordWithParts', () => {
  const createdAt = new Date('2026-11-28T10:00:00Z');
  const record = { id: 'log-1', workspaceId: 'ws-1', createdAt, requestBody: conversation, responseBody: { content: [{ type: 'text', text: long('Done') }] } };

  it('carries the parts not known to be stored, and only a reference to the others', () => {
    const known = new KnownParts();
    const first = recordWithParts(record, known);
    const stored = JSON.parse(first.json);
    expect(stored.bodyParts).toHaveLength(5);
    expect(stored.bodyParts[0]).toEqual({
      h: hashPart(JSON.stringify(conversation.system)),
      n: Buffer.byteLength(JSON.stringify(conversation.system)),
      b: conversation.system,
    });
    expect(stored.partHashes).toEqual(stored.bodyParts.map((part: { h: string }) => part.h));
    expect(stored.partLayout).toEqual({ request: [['system'], ['tools'], ['messages', [0, 2]]], response: [['content', [0]]] });
    expect(stored.bodyBytes).toBe(Buffer.byteLength(JSON.stringify(record.requestBody)) + Buffer.byteLength(JSON.stringify(record.responseBody)));
    expect(first.partKeys[0]).toBe(knownPartKey('ws-1', hashPart(JSON.stringify(conversation.system)), '2026-11-28'));

    known.learn(first.partKeys);
    const again = JSON.parse(recordWithParts(record, known).json);
    expect(again.bodyParts).toBeUndefined();
    expect(again.partHashes).toEqual(stored.partHashes);
    // Known on another day, or in another workspace, is not known.
    expect(JSON.parse(recordWithParts({ ...record, createdAt: new Date('2026-11-29T00:00:01Z') }, known).json).bodyParts).toHaveLength(5);
    expect(JSON.parse(recordWithParts({ ...record, workspaceId: 'ws-2' }, known).json).bodyParts).toHaveLength(5);
  });

  it('carries a part once when the body repeats it', () => {
    const repeated = { messages: [conversation.messages[0], conversation.messages[0]] };
    const stored = JSON.parse(recordWithParts({ ...record, requestBody: repeated, responseBody: null }, new KnownParts()).json);
    expect(stored.partHashes).toHaveLength(2);
    expect(stored.bodyParts).toHaveLength(1);
  });

  it('stores a record without bodies, or without parts, as it is', () => {
    expect(JSON.parse(recordWithParts({ ...record, requestBody: null, responseBody: null }, new KnownParts()).json)).toEqual({
      ...record,
      requestBody: null,
      responseBody: null,
      createdAt: createdAt.toISOString(),
    });
    const small = JSON.parse(recordWithParts({ ...record, requestBody: { model: 'm' }, responseBody: null }, new KnownParts()).json);
    expect(small).toMatchObject({ requestBody: { model: 'm' }, bodyBytes: 13 });
    expect(small.partHashes).toBeUndefined();
  });

  it('forgets the least recently used part past its size', () => {
    const known = new KnownParts(2);
    known.learn(['a', 'b']);
    expect(known.has('a')).toBe(true);
    known.learn(['c']);
    expect([known.has('a'), known.has('b'), known.has('c')]).toEqual([true, false, true]);
  });
});
