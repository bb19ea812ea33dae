// `npm run test:clients`: the real clients (Python SDKs, Vercel AI SDK, LangChain, Google Gen AI
// SDK, OpenAI Agents SDK, Claude Code, Claude Agent SDK, Codex, Gemini CLI, opencode) driven
// against the gateway and the mock upstreams. Not part of `npm test`.
/** @type {import('jest').Config} */
module.exports = {
  displayName: 'clients',
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: ['<rootDir>/test/clients/**/*.client-spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
};
