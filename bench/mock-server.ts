/**
 * Child-process entry for the benchmark: runs the mock upstream in its own process
 * (its own event loop, its own core with --pin) and prints `MOCK_URL=<url>` on stdout.
 * Exits on SIGTERM/SIGINT, and when stdin closes (the benchmark went away).
 */
import { startMockUpstream } from '../test/support/mock-upstream';

async function main(): Promise<void> {
  const mock = await startMockUpstream({ record: false });
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void mock.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.on('end', stop).on('error', stop).resume();
  process.stdout.write(`MOCK_URL=${mock.url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`mock upstream failed to start: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
