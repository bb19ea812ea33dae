/**
 * The README's JavaScript and Python examples, run as they are (copied out of the fenced
 * blocks, nothing changed) against a gateway whose key routes to the mock OpenAI by
 * default, with the virtual keys the examples name (`openai-prod`, `anthropic-prod`).
 * An example the gateway broke, or one whose code no longer runs, fails here.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { admin } from '../support/test-gateway';
import { ClientWorld, describeRun, GatewayKey, MOCK_TEXT, pythonWithSdks, ROOT, runProcess, startClientWorld, TARGETS } from './client-harness';

interface Example {
  language: 'js' | 'python';
  /** Where it stands in the README: the heading above it. */
  heading: string;
  code: string;
}

/** Every ```js and ```python block of the README, with the heading it stands under. */
function readmeExamples(): Example[] {
  const examples: Example[] = [];
  let heading = '';
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,4} /.test(lines[i])) heading = lines[i].replace(/^#+ /, '');
    const fence = /^```(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    if (fence[1] === 'js' || fence[1] === 'python') examples.push({ language: fence[1], heading, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return examples;
}

const EXAMPLES = readmeExamples();
// Inside node_modules/.cache so that `import 'openai'` resolves to the project's packages.
const DIR = join(ROOT, 'node_modules/.cache/readme-examples');

describe('the README examples, run as they are', () => {
  let world: ClientWorld;
  let key: GatewayKey;

  beforeAll(async () => {
    world = await startClientWorld();
    for (const [slug, provider] of [
      ['openai-prod', 'openai'],
      ['anthropic-prod', 'anthropic'],
    ]) {
      const created = await admin(world.gateway, 'POST', '/v1/virtual-keys', {
        name: slug,
        slug,
        provider,
        key: `sk-${slug}-readme`,
        custom_host: `${world.mock.url}/v1`,
      });
      expect(created.status).toBe(201);
    }
    key = await world.keyFor(TARGETS.openai, 'readme');
    mkdirSync(DIR, { recursive: true });
  }, 120_000);

  afterAll(() => world?.close());

  it('has JavaScript and Python examples for the quick start and every client section', () => {
    const headings = new Set(EXAMPLES.map((example) => `${example.language} ${example.heading}`));
    for (const expected of [
      'js Quick start',
      'python Quick start',
      'python Python SDKs',
      'js Vercel AI SDK',
      'js Google Gen AI SDK',
      'js LangChain JS',
      'js OpenAI Agents SDK',
    ])
      expect(headings).toContain(expected);
  });

  it.each(EXAMPLES.map((example, i) => [`${example.language} #${i} under "${example.heading}"`, example] as const))(
    '%s runs and prints the answers',
    async (_, example) => {
      const file = join(DIR, `example-${EXAMPLES.indexOf(example)}.${example.language === 'js' ? 'mjs' : 'py'}`);
      writeFileSync(file, example.code);
      const command = example.language === 'js' ? process.execPath : await pythonWithSdks();
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: DIR, GATEWAY_URL: world.baseUrl, GATEWAY_KEY: key.key };
      const run = await runProcess(command, [file], { env, cwd: DIR, timeoutMs: 60_000 });
      if (run.code !== 0) throw new Error(`the README example failed:\n${example.code}\n${describeRun(run)}`);
      expect(run.stdout).toContain(MOCK_TEXT);
    },
    120_000,
  );
});
