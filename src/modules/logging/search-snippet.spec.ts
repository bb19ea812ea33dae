import { searchSnippet, searchWords } from './search-snippet';

describe('searchWords', () => {
  it('keeps the words of terms and phrases, drops exclusions and operators', () => {
    expect(searchWords('Refund -gift "damaged Parcel" or -"not this" x')).toEqual(['refund', 'damaged', 'parcel', 'x']);
    expect(searchWords('')).toEqual([]);
  });
});

describe('searchSnippet', () => {
  const request = {
    model: 'm',
    messages: [
      { role: 'user', content: 'Hello' },
      { role: 'user', content: `${'a'.repeat(100)} my refunds are late, refund them` },
    ],
  };

  it('cuts the first string holding a word at the beginning of a word, every word in it marked', () => {
    const snippet = searchSnippet(request, null, ['refund'])!;
    expect(snippet.in).toBe('request');
    expect(snippet.text.startsWith('…')).toBe(true);
    const marked = snippet.highlights.map(([s, e]) => snippet.text.slice(s, e));
    expect(marked).toEqual(['refund', 'refund']);
    expect(snippet.text).toContain('my refunds are late');
  });

  it('finds the answer too, and nothing inside a word or when no word is given', () => {
    expect(searchSnippet({ a: 'prefunded' }, { choices: [{ message: { content: 'Refund issued' } }] }, ['refund'])).toEqual({
      in: 'response',
      text: 'Refund issued',
      highlights: [[0, 6]],
    });
    expect(searchSnippet(request, null, [])).toBeNull();
    expect(searchSnippet({ a: 'nothing here' }, null, ['refund'])).toBeNull();
  });
});
