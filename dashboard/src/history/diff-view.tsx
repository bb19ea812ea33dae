import { useState } from 'preact/hooks';
import { foldUnchanged, lineDiff } from './line-diff';

/**
 * Two texts' lines side by side in one column: removed lines in red (`-`, a `<del>`),
 * added ones in green (`+`, an `<ins>`), three unchanged lines of context around each
 * change and the longer unchanged runs folded. Screen readers hear "removed"/"added".
 */
export function DiffView({ oldText, newText, oldLabel, newLabel }: { oldText: string; newText: string; oldLabel: string; newLabel: string }) {
  const lines = lineDiff(oldText, newText);
  const removed = lines.filter((l) => l.kind === 'removed').length;
  const added = lines.filter((l) => l.kind === 'added').length;
  const [everything, setEverything] = useState(false);
  const hunks = everything ? [{ kind: 'lines' as const, lines }] : foldUnchanged(lines);
  const folds = hunks.some((hunk) => hunk.kind === 'folded');
  return (
    <figure class="diff">
      <figcaption>
        <span class="diff-old">− {oldLabel}</span> <span class="diff-new">+ {newLabel}</span>{' '}
        <span class="muted" data-testid="diff-summary">
          {removed === 0 && added === 0 ? 'no change' : `${added} ${added === 1 ? 'line' : 'lines'} added, ${removed} removed`}
        </span>
        {(folds || everything) && (
          <button type="button" class="link-button" aria-pressed={everything} onClick={() => setEverything(!everything)}>
            Show unchanged lines
          </button>
        )}
      </figcaption>
      <div class="diff-lines" tabIndex={0} role="region" aria-label={`Changes from ${oldLabel} to ${newLabel}`}>
        {hunks.map((hunk, h) =>
          hunk.kind === 'folded' ? (
            <div class="diff-fold" key={`f${h}`}>
              {hunk.count} unchanged {hunk.count === 1 ? 'line' : 'lines'}
            </div>
          ) : (
            hunk.lines.map((line) => {
              const key = `${line.oldNo}:${line.newNo}`;
              const number = (
                <span class="diff-no" aria-hidden="true">
                  {line.newNo ?? line.oldNo}
                </span>
              );
              if (line.kind === 'removed')
                return (
                  <del class="diff-line removed" key={key}>
                    {number}
                    <span class="visually-hidden">removed: </span>
                    <span aria-hidden="true">-</span>
                    {line.text}
                  </del>
                );
              if (line.kind === 'added')
                return (
                  <ins class="diff-line added" key={key}>
                    {number}
                    <span class="visually-hidden">added: </span>
                    <span aria-hidden="true">+</span>
                    {line.text}
                  </ins>
                );
              return (
                <div class="diff-line" key={key}>
                  {number}
                  <span aria-hidden="true"> </span>
                  {line.text}
                </div>
              );
            })
          ),
        )}
      </div>
    </figure>
  );
}
