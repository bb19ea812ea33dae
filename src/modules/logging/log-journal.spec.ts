import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogJournal } from './log-journal';

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** An entry as the log writer makes one: the record's JSON, and its id kept aside. */
const entry = (record: { id: string; text?: string }) => ({ id: record.id, json: JSON.stringify(record) });
const entryOf = (json: string) => entry(JSON.parse(json) as { id: string });

describe('LogJournal', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'journal-spec-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const files = () => readdirSync(dir);
  const lines = () => files().flatMap((file) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean));

  it('writes each tick’s records to disk and deletes the file once they are all stored', async () => {
    const journal = new LogJournal(dir, 1 << 20);
    const records = [entry({ id: 'a' }), entry({ id: 'b' })];
    records.forEach((record) => journal.append(record));
    await tick();
    expect(lines().map((line) => JSON.parse(line).id)).toEqual(['a', 'b']);
    journal.release([records[0]]);
    expect(files()).toHaveLength(1);
    journal.release([records[1]]);
    expect(files()).toEqual([]);
    expect(journal.size).toBe(0);
  });

  it('reads back records the memory queue let go, and only then deletes their file', async () => {
    const journal = new LogJournal(dir, 1 << 20);
    const kept = entry({ id: 'kept' });
    const spilled = entry({ id: 'spilled' });
    journal.append(spilled);
    journal.append(kept);
    expect(journal.spill(spilled)).toBe(true);
    journal.release([kept]);
    expect(files()).toHaveLength(1); // the spilled record is on disk only
    const readBack = journal.readSpilled(entryOf);
    expect(readBack?.map((read) => read.id)).toEqual(['spilled', 'kept']);
    expect(journal.readSpilled(entryOf)).toBeNull();
    journal.release(readBack!);
    expect(files()).toEqual([]);
  });

  it('takes over the files of a process that is gone, skipping a line cut short by the crash, but not those of a running one', () => {
    writeFileSync(join(dir, '00001700000000000-999999999-000000.jsonl'), '{"id":"x"}\n{"id":"y"}\n{"id":"tor');
    writeFileSync(join(dir, `00001700000000001-${process.ppid}-000000.jsonl`), '{"id":"other"}\n');
    const journal = new LogJournal(dir, 1 << 20);
    expect(journal.adoptOrphans()).toBe(1);
    // Claimed under this process's pid: another process starting on the directory (a sibling worker) leaves it alone.
    expect(files().sort()).toEqual([`00001700000000000-${process.pid}-adopted000000.jsonl`, `00001700000000001-${process.ppid}-000000.jsonl`]);
    const records = journal.readSpilled(entryOf)!;
    expect(records).toEqual([entry({ id: 'x' }), entry({ id: 'y' })]);
    journal.release(records);
    expect(files()).toEqual([`00001700000000001-${process.ppid}-000000.jsonl`]);
  });

  it("writes the entry's JSON as it is as the record's line", async () => {
    const journal = new LogJournal(dir, 1 << 20);
    journal.append({ json: '{"id":"a",  "built":"once"}' });
    await tick();
    expect(lines()).toEqual(['{"id":"a",  "built":"once"}']);
  });

  it('past its size bound, refuses to journal (the record stays in memory only)', () => {
    const journal = new LogJournal(dir, 50);
    expect(journal.append(entry({ id: 'a', text: 'x'.repeat(10) }))).toBe(true);
    const refused = entry({ id: 'b', text: 'x'.repeat(40) });
    expect(journal.append(refused)).toBe(false);
    expect(journal.spill(refused)).toBe(false);
  });
});
