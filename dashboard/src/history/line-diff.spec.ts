import { foldUnchanged, lineDiff } from './line-diff';

const marks = (oldText: string, newText: string) =>
  lineDiff(oldText, newText).map((line) => `${{ same: ' ', removed: '-', added: '+' }[line.kind]}${line.text}`);

describe('lineDiff', () => {
  it('keeps equal texts as unchanged lines', () => {
    expect(marks('a\nb', 'a\nb')).toEqual([' a', ' b']);
  });

  it('shows a changed line as removed then added, with the lines around it kept', () => {
    expect(marks('{\n  "a": 1,\n  "b": 2\n}', '{\n  "a": 1,\n  "b": 3\n}')).toEqual([' {', '   "a": 1,', '-  "b": 2', '+  "b": 3', ' }']);
  });

  it('aligns insertions and deletions in the middle (a longest common subsequence)', () => {
    expect(marks('a\nb\nc\nd', 'a\nx\nc\nd\ne')).toEqual([' a', '-b', '+x', ' c', ' d', '+e']);
    expect(marks('a\nb\nc', 'c')).toEqual(['-a', '-b', ' c']);
  });

  it('numbers the lines of each side', () => {
    const lines = lineDiff('a\nb', 'b\nc');
    expect(lines.map((l) => [l.oldNo, l.newNo])).toEqual([
      [1, null],
      [2, 1],
      [null, 2],
    ]);
  });
});

describe('foldUnchanged', () => {
  it('folds unchanged runs longer than the context around a change', () => {
    const old = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const hunks = foldUnchanged(lineDiff(old, old.replace('line 10', 'line ten')), 2);
    expect(hunks.map((h) => (h.kind === 'folded' ? h.count : h.lines.length))).toEqual([8, 6, 7]);
  });

  it('folds everything when nothing changed', () => {
    expect(foldUnchanged(lineDiff('a\nb', 'a\nb'))).toEqual([{ kind: 'folded', count: 2 }]);
  });
});
