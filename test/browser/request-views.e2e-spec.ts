/**
 * The request views of the dashboard in a real browser (issue 25, "Readable requests"): a
 * request read as a conversation with the answer first and the raw JSON one tab away, the
 * keys, config and prompt named and linked instead of their UUIDs, and a trace drawn as a
 * waterfall (a fallback, an MCP tool loop). Every request goes through the gateway to the
 * mock upstreams with the official clients. Screenshots go to artifacts/screenshots/.
 */
import Anthropic from '@anthropic-ai/sdk';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { signIn, SHOTS, startBrowser } from './browser-support';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, createApiKey, createVirtualKey, openai } from '../support/e2e-helpers';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';

jest.setTimeout(60_000);

/** A small picture sent with the chat message, as a data URL (the dashboard draws only inline images). */
const PICTURE = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#bae6fd"/><circle cx="32" cy="30" r="16" fill="#f59e0b"/><rect y="48" width="64" height="16" fill="#16a34a"/></svg>',
).toString('base64')}`;

/** Markdown as a model writes it, and HTML that must stay text. */
const MARKDOWN_PROMPT =
  'echo: **Steps** to take: `npm ci` then [the docs](https://example.com/docs) or [this](javascript:alert(1)) <img src=x onerror=alert(1)>';

describe('request views in a browser', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let mcp: McpTestServer;
  let browser: Browser;
  let page: Page;
  let appKey: { id: string; key: string };
  const ids: Record<'chat' | 'anthropic' | 'responses' | 'prompt' | 'fallback' | 'loop' | 'embedding' | 'orphan' | 'markdown', string> = {} as never;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** The detail panel scrolls within the window: a tall window shows all of it. */
  const tallShot = async (name: string) => {
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: size.width, height: 2000 });
    await shot(name);
    await page.setViewportSize(size);
  };
  const url = (path: string) => `${gateway.url}/dashboard${path}`;
  const horizontalOverflow = () =>
    page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth) as Promise<number>;
  const detail = () => page.getByRole('region', { name: /·/ });
  const openLog = async (id: string) => {
    await page.goto(url(`/logs/${id}`));
    await detail().getByRole('heading', { name: 'Trace' }).waitFor();
  };
  const traceRows = () => detail().getByTestId('trace-row');

  beforeAll(async () => {
    mock = await startMockUpstream();
    mcp = await startMcpTestServer();
    gateway = await startTestGateway({ MCP_ALLOWED_NETWORKS: '127.0.0.1' });
    await createVirtualKey(gateway, { name: 'OpenAI views', slug: 'openai-views', key: 'sk-views', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { name: 'Claude views', slug: 'claude-views', provider: 'anthropic', key: 'sk-ant-views', custom_host: `${mock.url}/v1` });
    const doomed = await createVirtualKey(gateway, { name: 'Doomed key', slug: 'doomed', key: 'sk-doomed', custom_host: `${mock.url}/v1` });
    appKey = await createApiKey(gateway, { name: 'views-app', role: 'user' });
    const config = await admin(gateway, 'POST', '/v1/configs', {
      name: 'Views fallback',
      slug: 'views-fallback',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'openai-views', override_params: { model: 'mock-error-503' } }, { virtual_key: 'openai-views' }],
      },
    });
    expect(config.status).toBe(201);
    await call(gateway, '/v1/mcp-servers', {
      method: 'POST',
      body: { name: 'Docs', slug: 'docs', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } },
    });

    // A streamed chat: system, a user message with a picture, the model's tool call, its result, and the answer.
    const chat = openai(gateway, { 'x-gateway-virtual-key': 'openai-views' }, 'unused', appKey.key);
    const stream = await chat.chat.completions
      .create({
        model: 'gpt-4o-mini',
        stream: true,
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
        messages: [
          { role: 'system', content: 'You are a weather bot.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'tools: get_weather {"city":"Paris"}' },
              { type: 'image_url', image_url: { url: PICTURE } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_weather_1', content: '18°C and sunny' },
        ],
      })
      .withResponse();
    for await (const _ of stream.data) void _;
    ids.chat = stream.response.headers.get('x-gateway-request-id')!;

    const claude = new Anthropic({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'claude-views' },
    });
    // Streamed too: the log keeps the message assembled from the events.
    const message = await claude.messages
      .create({
        model: 'claude-sonnet-5-5',
        max_tokens: 100,
        stream: true,
        system: 'Answer in French.',
        messages: [{ role: 'user', content: 'echo: Bonjour from Claude' }],
      })
      .withResponse();
    for await (const _ of message.data) void _;
    ids.anthropic = message.response.headers.get('x-gateway-request-id')!;

    const responses = await openai(gateway, { 'x-gateway-virtual-key': 'openai-views' })
      .responses.create({
        model: 'gpt-4o-mini',
        instructions: 'Add numbers with the tool.',
        tools: [{ type: 'function', name: 'add', strict: false, parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } }],
        input: [
          { role: 'user', content: 'tools: add {"a":1,"b":2}' },
          { type: 'function_call', call_id: 'call_add_1', name: 'add', arguments: '{"a":1,"b":2}' },
          { type: 'function_call_output', call_id: 'call_add_1', output: '3' },
        ],
      })
      .withResponse();
    ids.responses = responses.response.headers.get('x-gateway-request-id')!;

    const prompt = await admin(gateway, 'POST', '/v1/prompts', {
      name: 'Support reply',
      slug: 'support-reply',
      model: 'gpt-4o-mini',
      virtual_key: 'openai-views',
      messages: [
        { role: 'system', content: 'You help {{customer}}.' },
        { role: 'user', content: 'echo: {{question}}' },
      ],
    });
    expect(prompt.status).toBe(201);
    const promptCall = await call(gateway, '/v1/prompts/support-reply/completions', {
      method: 'POST',
      body: { variables: { customer: 'Ada', question: 'Hello Ada' } },
    });
    expect(promptCall.status).toBe(200);
    ids.prompt = promptCall.headers.get('x-gateway-request-id')!;

    const fallback = await openai(gateway, { 'x-gateway-config': 'views-fallback' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello after a fallback' }] })
      .withResponse();
    ids.fallback = fallback.response.headers.get('x-gateway-request-id')!;

    const loop = await openai(gateway, { 'x-gateway-virtual-key': 'openai-views', 'x-gateway-mcp': 'docs' })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'tools: docs__add {"a":1,"b":2} ; docs__fail | docs__search_docs {"query":"refunds"}' }],
      })
      .withResponse();
    ids.loop = loop.response.headers.get('x-gateway-request-id')!;

    const embedding = await openai(gateway, { 'x-gateway-virtual-key': 'openai-views' })
      .embeddings.create({ model: 'text-embedding-3-small', input: 'no conversation here' })
      .withResponse();
    ids.embedding = embedding.response.headers.get('x-gateway-request-id')!;

    // An answer in Markdown, with raw HTML in it (the mock echoes the text after "echo:").
    const markdown = await openai(gateway, { 'x-gateway-virtual-key': 'openai-views' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: MARKDOWN_PROMPT }] })
      .withResponse();
    ids.markdown = markdown.response.headers.get('x-gateway-request-id')!;

    const orphan = await openai(gateway, { 'x-gateway-virtual-key': 'doomed' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    ids.orphan = orphan.response.headers.get('x-gateway-request-id')!;
    expect((await admin(gateway, 'DELETE', `/v1/virtual-keys/${doomed.id}`)).status).toBeLessThan(300);
    await gateway.flushLogs();

    browser = await startBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, url(''), gateway.adminKey);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
    await mcp?.close();
  });

  it('reads a streamed chat as a conversation: the answer first, then system, user with a thumbnail, tool call and result', async () => {
    await openLog(ids.chat);
    const tab = detail().getByRole('tab', { name: 'Conversation' });
    expect(await tab.getAttribute('aria-selected')).toBe('true');
    const answer = detail().locator('section', { has: page.getByRole('heading', { name: /^Answer/ }) });
    expect(await answer.innerText()).toMatch(/results: 18°C and sunny/);
    expect(await answer.getByRole('heading').innerText()).toMatch(/stop[\s\S]*streamed, assembled by the gateway/);

    const messages = detail().locator('ol.messages > li');
    expect(await messages.count()).toBe(4);
    const [system, user, assistant, tool] = await messages.allInnerTexts();
    expect(system).toMatch(/^SYSTEM\s+You are a weather bot\./);
    expect(user).toMatch(/^USER\s+tools: get_weather/);
    expect(assistant).toMatch(/^ASSISTANT\s+calls get_weather · call_weather_1\s+\{\s+"city": "Paris"\s+\}/);
    // The result is paired with its call by id.
    expect(tool).toMatch(/^TOOL RESULT\s+result of get_weather · call_weather_1\s+18°C and sunny/);
    const thumbnail = messages.nth(1).locator('img');
    expect(await thumbnail.getAttribute('src')).toBe(PICTURE);
    expect(await thumbnail.evaluate((img: any) => img.naturalWidth)).toBe(64);
    expect(await detail().locator('.tools-offered').innerText()).toMatch(/Tools offered:\s+get_weather/);
    // The answer comes before the conversation that led to it.
    const order = await detail()
      .locator('.conversation h3')
      .allInnerTexts()
      .then((titles) => titles.map((title) => title.split(/\s/)[0]));
    expect(order).toEqual(['Answer', 'Conversation']);
    await tallShot('request-chat-view');

    // The raw JSON, one click (or arrow key) away; the choice sticks for the next request, also after a reload.
    await tab.focus();
    await page.keyboard.press('ArrowRight');
    const raw = detail().getByRole('tab', { name: 'Raw JSON' });
    expect(await raw.getAttribute('aria-selected')).toBe('true');
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.textContent === 'Raw JSON');
    const body = JSON.parse(await detail().locator('pre[aria-label="Request body"]').innerText());
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_weather_1', content: '18°C and sunny' });
    expect(JSON.parse(await detail().locator('pre[aria-label="Response body"]').innerText())).toMatchObject({
      choices: [{ message: { content: 'results: 18°C and sunny' } }],
    });
    await shot('request-chat-raw-json');
    await openLog(ids.anthropic);
    expect(await detail().getByRole('tab', { name: 'Raw JSON' }).getAttribute('aria-selected')).toBe('true');
    await detail().getByRole('tab', { name: 'Conversation' }).click();
    await detail()
      .getByRole('heading', { name: /^Answer/ })
      .waitFor();
  });

  it('names the API key and virtual key and links them to their pages; a deleted key shows its id', async () => {
    await openLog(ids.chat);
    const apiKey = detail().getByTestId('name-api-key');
    expect(await apiKey.innerText()).toBe('views-app');
    expect(await apiKey.getAttribute('href')).toBe(`/dashboard/api-keys/${appKey.id}`);
    const virtualKey = detail().getByTestId('name-virtual-key');
    expect(await virtualKey.innerText()).toBe('OpenAI views');
    expect(await virtualKey.getAttribute('href')).toBe('/dashboard/virtual-keys/openai-views');
    // No UUID is shown for them, only their names.
    const facts = await detail().locator('dl.facts').innerText();
    expect(facts).not.toContain(appKey.id);

    await virtualKey.click();
    await page.getByRole('heading', { name: 'Virtual key “OpenAI views”' }).waitFor();
    expect(page.url()).toBe(url('/virtual-keys/openai-views'));
    expect(await page.locator('table.resource-table tr[aria-current="true"]').innerText()).toMatch(/openai-views/);
    await shot('request-named-virtual-key-page');
    await page.goBack();
    await detail().getByTestId('name-api-key').click();
    await page.getByRole('heading', { name: 'API key “views-app”' }).waitFor();

    await openLog(ids.orphan);
    const vkFact = detail().locator('xpath=.//dt[.="Virtual key"]/following-sibling::dd[1]');
    await vkFact.getByText('(no such virtual key now)').waitFor();
    expect(await vkFact.innerText()).toMatch(/^[0-9a-f-]{36} \(no such virtual key now\)/);
  });

  it('reads a streamed Anthropic message: system, user and the assembled answer with its stop reason', async () => {
    await openLog(ids.anthropic);
    const answer = detail().locator('section', { has: page.getByRole('heading', { name: /^Answer/ }) });
    await answer.waitFor();
    expect(await answer.innerText()).toMatch(/^Answer end_turn streamed, assembled by the gateway\s+ASSISTANT\s+Bonjour from Claude$/);
    expect(
      await detail()
        .getByRole('heading', { name: /^Conversation/ })
        .innerText(),
    ).toMatch(/Anthropic messages, 2 messages/);
    expect(await detail().locator('ol.messages > li').allInnerTexts()).toEqual([
      expect.stringMatching(/^SYSTEM\s+Answer in French\.$/),
      expect.stringMatching(/^USER\s+echo: Bonjour from Claude$/),
    ]);
    expect(await detail().getByTestId('name-virtual-key').innerText()).toBe('Claude views');
    await tallShot('request-anthropic-view');
  });

  it('reads a Responses exchange: instructions, input, the function call and its output, and the output', async () => {
    await openLog(ids.responses);
    const answer = detail().locator('section', { has: page.getByRole('heading', { name: /^Answer/ }) });
    expect(await answer.innerText()).toMatch(/^Answer completed\s+ASSISTANT\s+results: 3$/);
    expect(
      await detail()
        .getByRole('heading', { name: /^Conversation/ })
        .innerText(),
    ).toMatch(/Responses, 4 messages/);
    expect(await detail().locator('ol.messages > li').allInnerTexts()).toEqual([
      expect.stringMatching(/^SYSTEM\s+Add numbers with the tool\.$/),
      expect.stringMatching(/^USER\s+tools: add/),
      expect.stringMatching(/^ASSISTANT\s+calls add · call_add_1\s+\{\s+"a": 1,\s+"b": 2\s+\}$/),
      expect.stringMatching(/^TOOL RESULT\s+result of add · call_add_1\s+3$/),
    ]);
  });

  it('names the prompt of a prompt call and reads the messages rendered from its template', async () => {
    await openLog(ids.prompt);
    const prompt = detail().getByTestId('name-prompt');
    expect(await prompt.innerText()).toBe('Support reply');
    expect(await prompt.getAttribute('href')).toBe('/dashboard/prompts/support-reply');
    expect(await detail().locator('ol.messages > li').allInnerTexts()).toEqual([
      expect.stringMatching(/^SYSTEM\s+You help Ada\.$/),
      expect.stringMatching(/^USER\s+echo: Hello Ada$/),
    ]);
    expect(await detail().locator('.answer').innerText()).toMatch(/ASSISTANT\s+Hello Ada$/);
    await prompt.click();
    await page.getByRole('heading', { name: 'Prompt “Support reply”' }).waitFor();
  });

  it('draws a fallback trace as a tree with timings, names the config, and opens the failed attempt with its error first', async () => {
    await openLog(ids.fallback);
    const config = detail().getByTestId('name-config');
    expect(await config.innerText()).toBe('Views fallback');
    expect(await config.getAttribute('href')).toBe('/dashboard/configs/views-fallback');

    await traceRows().first().waitFor();
    expect(await traceRows().count()).toBe(2);
    const root = traceRows().first();
    const rootLine = await root.locator('> .span-row').innerText();
    expect(rootLine).toMatch(/^request\s+openai · gpt-4o-mini \(this one\)\s+200 · target 1\s+\+0 ms · \d+ ms$/);
    // The failed first target is inside the request's row, started after it.
    const child = root.locator('ul.nested > li');
    expect(await child.count()).toBe(1);
    expect(await child.innerText()).toMatch(/^└\s*failed attempt\s+openai · mock-error-503\s+503 · target 0\s+\+\d+ ms · \d+ ms$/);
    const bars = await detail()
      .locator('.span-bar')
      .evaluateAll((spans: any[]) => spans.map((span) => ({ left: parseFloat(span.style.left), width: parseFloat(span.style.width) })));
    expect(bars[0]).toEqual({ left: 0, width: 100 });
    expect(bars[1].left + bars[1].width).toBeLessThanOrEqual(100);
    await tallShot('request-trace-fallback');

    await child.getByRole('link', { name: 'openai · mock-error-503' }).click();
    await detail()
      .getByRole('heading', { name: /mock-error-503/ })
      .waitFor();
    expect(await detail().getByTestId('answer-error').innerText()).toMatch(/^503: /);
    expect(await detail().locator('.span.current').innerText()).toMatch(/mock-error-503 \(this one\)/);
  });

  it('draws an MCP tool loop: its rounds and tool calls under the request, each linked to its row', async () => {
    await openLog(ids.loop);
    await traceRows().first().waitFor();
    // The request, two earlier rounds and three tool calls.
    expect(await traceRows().count()).toBe(6);
    const children = traceRows().first().locator('ul.nested > li');
    const kinds = await children.locator('.span-kind').allInnerTexts();
    expect(kinds.sort()).toEqual(['model round', 'model round', 'tool call', 'tool call', 'tool call, failed']);
    expect(await detail().locator('.trace > p').innerText()).toMatch(/^6 rows over \d+ ms · 1 failed · 3 tool calls\./);
    // add and fail ran in parallel (either may start first), search_docs in the next round.
    // Each row's own kind and link (the first in it): under load a tool call may be drawn inside a round's time span, nested.
    const calls = await traceRows().evaluateAll((rows: any[]) =>
      rows.filter((row) => /^tool call/.test(row.querySelector('.span-kind')?.textContent ?? '')).map((row) => row.querySelector('a')?.textContent as string),
    );
    expect(calls.slice(0, 2).sort()).toEqual(['docs · add', 'docs · fail']);
    expect(calls[2]).toBe('docs · search_docs');
    await tallShot('request-trace-tool-loop');

    await children.getByRole('link', { name: 'docs · add' }).click();
    await detail()
      .getByRole('heading', { name: /mcp\.tools\.call · add/ })
      .waitFor();
    const result = detail().locator('section', { has: page.getByRole('heading', { name: /^Result/ }) });
    expect(await result.innerText()).toMatch(/result of add\s+3$/);
    expect(await detail().locator('ol.messages').innerText()).toMatch(/calls docs: add\s+\{\s+"a": 1,\s+"b": 2\s+\}/);
    await tallShot('request-tool-call-view');
  });

  it('draws Markdown in a message (emphasis, code, safe links) and shows raw HTML as text', async () => {
    await openLog(ids.markdown);
    const answer = detail().locator('section', { has: page.getByRole('heading', { name: /^Answer/ }) });
    await answer.waitFor();
    expect(await answer.locator('.markdown strong').allInnerTexts()).toEqual(['Steps']);
    expect(await answer.locator('.markdown code').allInnerTexts()).toEqual(['npm ci']);
    const links = answer.locator('.markdown a');
    expect(await links.count()).toBe(1);
    expect(await links.first().getAttribute('href')).toBe('https://example.com/docs');
    expect(await answer.innerText()).toContain('<img src=x onerror=alert(1)>');
    expect(await answer.locator('img').count()).toBe(0);
    await tallShot('request-markdown');
  });

  it('shows a body of no chat shape as raw JSON only', async () => {
    await openLog(ids.embedding);
    await detail().locator('pre[aria-label="Response body"]').waitFor();
    expect(await detail().getByRole('tablist').count()).toBe(0);
  });

  it('fits a 390 px wide screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openLog(ids.chat);
    await detail()
      .getByRole('heading', { name: /^Answer/ })
      .waitFor();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await shot('request-chat-view-narrow');
    await openLog(ids.loop);
    await traceRows().first().waitFor();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await detail().getByRole('heading', { name: 'Trace' }).scrollIntoViewIfNeeded();
    await shot('request-trace-narrow');
  });
});
