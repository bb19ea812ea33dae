/**
 * The official Python SDKs (`openai`, `anthropic`; pinned in client-harness.ts, installed in a
 * venv the suite makes), set up with only a base URL and a gateway key, against every target:
 * OpenAI-shaped calls to Anthropic and Gemini and Anthropic-shaped calls to OpenAI and Gemini
 * go through the gateway's translation.
 */
import { join } from 'node:path';
import { describeRun, GatewayKey, pythonWithSdks, ROOT, runProcess } from './client-harness';
import { ClientDriver, describeClient, ToolExchange } from './client-matrix';

const SCRIPT = join(ROOT, 'test/clients/python/sdk_client.py');

function pythonDriver(sdk: 'openai' | 'anthropic', baseUrl: string): ClientDriver {
  const run = async (mode: string, key: GatewayKey): Promise<any> => {
    const python = await pythonWithSdks();
    const result = await runProcess(python, [SCRIPT, sdk, mode, baseUrl, key.key, key.target.model], {
      env: { PATH: process.env.PATH ?? '', HOME: ROOT, NO_PROXY: '127.0.0.1,localhost' },
      timeoutMs: 30_000,
    });
    if (result.code !== 0) throw new Error(`python ${sdk} ${mode}: ${describeRun(result)}`);
    return JSON.parse(result.stdout.trim().split('\n').pop()!);
  };
  return {
    operation: sdk === 'openai' ? 'chat.completions' : 'messages',
    expectedTool: 'get_weather',
    plain: async (key) => (await run('plain', key)).text,
    stream: async (key) => (await run('stream', key)).text,
    tool: async (key): Promise<ToolExchange> => {
      const answer = await run('tool', key);
      expect(answer.arguments).toEqual([{ location: 'Paris' }]);
      return { text: answer.text, toolCalls: answer.tool_calls };
    },
  };
}

beforeAll(async () => {
  await pythonWithSdks(); // made once, outside the first test's time
}, 300_000);

describeClient('Python openai SDK', (world) => pythonDriver('openai', world.baseUrl));
describeClient('Python anthropic SDK', (world) => pythonDriver('anthropic', world.baseUrl));
