// One query() of the Claude Agent SDK, run by claude-agent-sdk.client-spec.ts in a Node process of
// its own (the SDK is ESM only; jest runs the specs as CommonJS). Every SDK message is printed
// as a JSON line. The gateway's address and key come from the environment, as a user sets
// them: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY.
//
//   node query.mjs plain|stream|tool <model> <prompt>
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';

const [mode, model, prompt] = process.argv.slice(2);

// A custom tool, served in this process through the SDK's in-process MCP server.
const weather = createSdkMcpServer({
  name: 'weather',
  version: '1.0.0',
  tools: [
    tool('get_weather', 'Weather by city', { location: z.string() }, async ({ location }) => ({
      content: [{ type: 'text', text: JSON.stringify({ location, temperature_c: 21, sky: 'clear' }) }],
    })),
  ],
});

const options = {
  model,
  cwd: process.cwd(),
  // No settings files, no session written to disk.
  settingSources: [],
  persistSession: false,
  includePartialMessages: mode === 'stream',
  stderr: (data) => process.stderr.write(data),
  ...(mode === 'tool'
    ? // No built-in tools: the custom one is the only tool offered, and the only one allowed.
      { tools: [], mcpServers: { weather }, allowedTools: ['mcp__weather__get_weather'], permissionMode: 'dontAsk', maxTurns: 3 }
    : { maxTurns: 1 }),
};

for await (const message of query({ prompt, options })) process.stdout.write(`${JSON.stringify(message)}\n`);
