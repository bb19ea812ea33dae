import { MAX_TEXT_CHARS, storableJson, storableRecord, storableText } from './storable-record';

describe('storable log values', () => {
  it('replaces NUL and lone surrogates, keeping well-formed pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\ufffdb');
    expect(storableText('x\ud800y\udc00z')).toBe('x\ufffdy\ufffdz');
    expect(storableText('emoji 😀 ok')).toBe('emoji 😀 ok');
    expect(storableText('end\ud83d')).toBe('end\ufffd');
  });

  it('cleans keys and values at any depth, leaving other types alone', () => {
    expect(storableJson({ 'k\u0000': ['v\ud800', 1, null, true, { deep: 'n\u0000' }] })).toEqual({
      'k\ufffd': ['v\ufffd', 1, null, true, { deep: 'n\ufffd' }],
    });
  });

  it('cuts text columns to MAX_TEXT_CHARS and cleans json columns, by column type', () => {
    const types = new Map([
      ['model', 'text'],
      ['metadata', 'jsonb'],
      ['latencyMs', 'integer'],
    ]);
    const record = { model: 'm'.repeat(3000), metadata: { team: 'a\u0000' }, latencyMs: 5, extra: 'x\u0000' };
    const stored = storableRecord(record, types);
    expect(stored).toEqual({ model: 'm'.repeat(MAX_TEXT_CHARS), metadata: { team: 'a\ufffd' }, latencyMs: 5, extra: 'x\u0000' });
    expect(record.model).toHaveLength(3000); // a copy, not the queued record
  });

  it('rounds and clamps integer columns, and nulls what is not a finite number', () => {
    const types = new Map([
      ['latencyMs', 'integer'],
      ['ttftMs', 'integer'],
      ['promptTokens', 'integer'],
    ]);
    expect(storableRecord({ latencyMs: 16.43, ttftMs: Number.NaN, promptTokens: 2 ** 40 }, types)).toEqual({
      latencyMs: 16,
      ttftMs: null,
      promptTokens: 2 ** 31 - 1,
    });
  });
});
