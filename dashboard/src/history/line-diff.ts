/**
 * A line diff: the longest common subsequence of two texts' lines, written as the
 * lines kept, removed (only in the old text) and added (only in the new one), in
 * order. Common first and last lines are set aside before the quadratic part, so a
 * small change in a long config stays cheap; past MAX_CELLS the changed middle is
 * shown as removed then added rather than aligned.
 */
export type DiffLine = { kind: 'same' | 'removed' | 'added'; text: string; oldNo: number | null; newNo: number | null };

const MAX_CELLS = 4_000_000;

export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }

  const out: DiffLine[] = [];
  const same = (i: number, j: number) => out.push({ kind: 'same', text: a[i], oldNo: i + 1, newNo: j + 1 });
  const removed = (i: number) => out.push({ kind: 'removed', text: a[i], oldNo: i + 1, newNo: null });
  const added = (j: number) => out.push({ kind: 'added', text: b[j], oldNo: null, newNo: j + 1 });

  for (let i = 0; i < start; i++) same(i, i);
  const n = endA - start;
  const m = endB - start;
  if (n * m > MAX_CELLS) {
    for (let i = start; i < endA; i++) removed(i);
    for (let j = start; j < endB; j++) added(j);
  } else {
    // lcs[i][j]: the common subsequence length of a[start+i..endA) and b[start+j..endB).
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[start + i] === b[start + j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) {
        same(start + i++, start + j++);
      } else if (j < m && (i === n || lcs[i][j + 1] > lcs[i + 1][j])) {
        added(start + j++);
      } else {
        removed(start + i++);
      }
    }
  }
  for (let k = 0; k < a.length - endA; k++) same(endA + k, endB + k);
  return out;
}

/** A run of unchanged lines folded away, between the changes shown with their context. */
export type DiffHunk = { kind: 'lines'; lines: DiffLine[] } | { kind: 'folded'; count: number };

/** Keeps `context` unchanged lines around each change and folds the longer runs between them. */
export function foldUnchanged(lines: DiffLine[], context = 3): DiffHunk[] {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) keep[k] = true;
  });
  const hunks: DiffHunk[] = [];
  let index = 0;
  while (index < lines.length) {
    const start = index;
    const kept = keep[index];
    while (index < lines.length && keep[index] === kept) index++;
    if (kept) hunks.push({ kind: 'lines', lines: lines.slice(start, index) });
    else hunks.push({ kind: 'folded', count: index - start });
  }
  return hunks;
}
