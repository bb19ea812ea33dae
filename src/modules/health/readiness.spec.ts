import { Readiness } from './readiness';

describe('Readiness: the shutdown deadline', () => {
  it('runs each watcher once at the deadline, except those cancelled, and at once after it', () => {
    const readiness = new Readiness();
    const ran: string[] = [];
    readiness.onDeadline(() => ran.push('a'));
    const cancel = readiness.onDeadline(() => ran.push('b'));
    readiness.onDeadline(() => ran.push('c'));
    cancel();
    expect(readiness.pastDeadline).toBe(false);
    readiness.reachDeadline();
    readiness.reachDeadline(); // a second signal runs nothing again
    expect(ran).toEqual(['a', 'c']);
    expect(readiness.pastDeadline).toBe(true);
    expect(readiness.ready).toBe(false);
    readiness.onDeadline(() => ran.push('late'));
    expect(ran).toEqual(['a', 'c', 'late']);
  });

  it('drains without reaching the deadline', () => {
    const readiness = new Readiness();
    let ran = false;
    readiness.onDeadline(() => (ran = true));
    readiness.drain();
    expect(readiness.ready).toBe(false);
    expect(readiness.pastDeadline).toBe(false);
    expect(ran).toBe(false);
  });
});
