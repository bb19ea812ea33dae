/**
 * Child-process entry for the benchmark: runs the mock upstream in its own process
 * (its own event loop, its own core with --pin) and prints `MOCK_URL=<url>` on stdout;
 * with `--tls`, over TLS offering HTTP/2 (as providers do), and `MOCK_CA_FILE=<path>`
 * (the authority to trust) too.
 * Exits on SIGTERM/SIGINT, and when stdin closes (the benchmark went away).
 */
import { startMockUpstream } from '../test/support/mock-upstream';
import { testCertificates } from '../test/support/test-certificates';

async function main(): Promise<void> {
  const certificates = process.argv.includes('--tls') ? await testCertificates() : undefined;
  const mock = await startMockUpstream({ record: false, tls: certificates });
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
  process.stdout.write(`${certificates ? `MOCK_CA_FILE=${certificates.caFile}\n` : ''}MOCK_URL=${mock.url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`mock upstream failed to start: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
