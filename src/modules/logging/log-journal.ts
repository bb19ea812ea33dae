import { Logger } from '@nestjs/common';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ThrottledWarning } from '../../common/logging/throttled-warning';

/** A journal file: records appended as JSON lines, deleted once all of them are in the database. */
interface Segment {
  path: string;
  fd: number | null;
  bytes: number;
  /** Lines appended this tick, written together at the end of it. */
  lines: string[];
  /** Its records held in memory and not yet in the database. */
  outstanding: number;
  /** Some of its records are only on disk (let go by the memory queue, or left by an earlier process). */
  spilled: boolean;
}

/**
 * A record as the journal takes it: its JSON, serialised once by the caller (who sends
 * the same text to the database). The entry object is the record's identity for
 * `release` and `spill`.
 */
export interface JournalEntry {
  json: string;
}

/** A segment is closed to new records past this size, so older ones can be deleted while traffic goes on. */
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The log writer's write-ahead journal: every log record is appended to a file in
 * LOG_JOURNAL_DIR before it waits in memory for its batch, and the file is deleted once
 * every record in it is in the database. So a database outage (records beyond the
 * memory bound stay on disk and are read back when the queue drains) and a crash
 * (`kill -9`: the files of a process that is gone are replayed at the next start) lose
 * nothing; re-inserting a record is harmless, its id makes the INSERT skip it.
 *
 * Lines are written once per event-loop tick (one write for all the records of the
 * tick): a crash loses at most the records of that instant. Files are named
 * `<time>-<pid>-<seq>.jsonl`; at start only those of processes no longer running are
 * taken over (each renamed to the taker's pid first), so instances sharing a directory
 * leave each other's files alone and no file is replayed twice.
 */
export class LogJournal {
  private readonly logger = new Logger(LogJournal.name);
  private readonly warning = new ThrottledWarning(this.logger);
  private readonly segments: Segment[] = [];
  private readonly owners = new WeakMap<JournalEntry, Segment>();
  private active: Segment | null = null;
  private totalBytes = 0;
  private sequence = 0;
  private writeScheduled = false;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Bytes on disk, for the metrics. */
  get size(): number {
    return this.totalBytes;
  }

  /** Takes over the files of gateway processes that are gone (crashed, or stopped with the database down). */
  adoptOrphans(): number {
    let adopted = 0;
    for (const name of readdirSync(this.dir)
      .filter((file) => file.endsWith('.jsonl'))
      .sort()) {
      const pid = Number(name.split('-')[1]);
      if (pid !== process.pid && processIsRunning(pid)) continue;
      // Claimed by renaming it to this process's name: workers of one cluster start together
      // on one directory, and only the one whose rename succeeds replays a file.
      const path = join(this.dir, `${name.split('-')[0]}-${process.pid}-adopted${String(this.sequence++).padStart(6, '0')}.jsonl`);
      try {
        renameSync(join(this.dir, name), path);
      } catch {
        continue; // another process took it
      }
      const bytes = statSync(path).size;
      this.segments.push({ path, fd: null, bytes, lines: [], outstanding: 0, spilled: true });
      this.totalBytes += bytes;
      adopted++;
    }
    return adopted;
  }

  /** Journals a record; false when the journal is full (the record is then in memory only). */
  append(entry: JournalEntry): boolean {
    const line = `${entry.json}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.totalBytes + bytes > this.maxBytes) {
      this.warning.warn(`Log journal full (${this.maxBytes} bytes): new records are held in memory only`);
      return false;
    }
    if (!this.active || this.active.bytes >= SEGMENT_MAX_BYTES) this.active = this.open();
    const segment = this.active;
    segment.lines.push(line);
    segment.bytes += bytes;
    segment.outstanding++;
    this.totalBytes += bytes;
    this.owners.set(entry, segment);
    if (!this.writeScheduled) {
      this.writeScheduled = true;
      setImmediate(() => this.writeLines());
    }
    return true;
  }

  /** These records are in the database: their files go once nothing else in them is waiting. */
  release(entries: JournalEntry[]): void {
    for (const entry of entries) {
      const segment = this.owners.get(entry);
      if (!segment) continue;
      segment.outstanding--;
      this.owners.delete(entry);
    }
    this.deleteSettled();
  }

  /** The memory queue let this record go: it stays on disk, to be read back later. False if it was not journaled. */
  spill(entry: JournalEntry): boolean {
    const segment = this.owners.get(entry);
    if (!segment) return false;
    segment.outstanding--;
    segment.spilled = true;
    this.owners.delete(entry);
    return true;
  }

  /**
   * The records of the oldest file holding some only on disk, to queue again, as
   * `entryOf` makes them from their lines (it throws on a line that is not JSON); null
   * when there is none.
   */
  readSpilled<T extends JournalEntry>(entryOf: (json: string) => T): T[] | null {
    const segment = this.segments.find((candidate) => candidate.spilled);
    if (!segment) return null;
    if (segment === this.active) this.active = null; // new records go to a new file
    this.writeLines();
    const records: T[] = [];
    for (const line of readFileSync(segment.path, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        records.push(entryOf(line));
      } catch {
        // The line a crash cut short: its request was in flight at that instant.
      }
    }
    segment.spilled = false;
    segment.outstanding += records.length;
    for (const entry of records) this.owners.set(entry, segment);
    if (records.length === 0) this.deleteSettled();
    return records;
  }

  /** Writes what is pending and closes the files; they stay on disk if records in them are not stored yet. */
  close(): void {
    this.writeLines();
    for (const segment of this.segments) this.closeFile(segment);
    this.deleteSettled();
  }

  private open(): Segment {
    const name = `${String(Date.now()).padStart(14, '0')}-${process.pid}-${String(this.sequence++).padStart(6, '0')}.jsonl`;
    const path = join(this.dir, name);
    const segment: Segment = { path, fd: openSync(path, 'a'), bytes: 0, lines: [], outstanding: 0, spilled: false };
    this.segments.push(segment);
    return segment;
  }

  private writeLines(): void {
    this.writeScheduled = false;
    for (const segment of this.segments) {
      if (!segment.lines.length) continue;
      const text = segment.lines.join('');
      segment.lines = [];
      try {
        segment.fd ??= openSync(segment.path, 'a');
        writeSync(segment.fd, text);
      } catch (error) {
        this.warning.warn(`Writing the log journal failed (records stay in memory): ${(error as Error).message}`);
      }
    }
  }

  private deleteSettled(): void {
    for (const segment of [...this.segments]) {
      if (segment.outstanding > 0 || segment.spilled) continue;
      // Every record of it is stored: lines not written yet need not be.
      segment.lines = [];
      if (segment === this.active) this.active = null;
      this.closeFile(segment);
      try {
        unlinkSync(segment.path);
      } catch {
        // Already gone.
      }
      this.segments.splice(this.segments.indexOf(segment), 1);
      this.totalBytes -= segment.bytes;
    }
  }

  private closeFile(segment: Segment): void {
    if (segment.fd === null) return;
    closeSync(segment.fd);
    segment.fd = null;
  }
}

function processIsRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
