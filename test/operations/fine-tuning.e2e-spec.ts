/**
 * Fine-tuning jobs and the model list through the gateway, driven with the official
 * `openai` SDK against the mock's OpenAI-format routes (Azure OpenAI's too).
 */
import { APIError } from 'openai';
import { call, createVirtualKey, expectError, logOf, openai } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

const TRACKER = (project: string) => ({ type: 'wandb' as const, wandb: { project, name: 'run-1', entity: 'team', tags: ['gateway'] } });

describe('fine-tuning jobs and models', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'openai-prod', key: 'sk-ft', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'azure-ft', provider: 'azure-openai', key: 'azure-secret', custom_host: mock.url });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const client = () => openai(gateway, { 'x-gateway-virtual-key': 'openai-prod' });

  it('creates a job with integrations and "auto" epochs, then lists, retrieves and cancels it, each call logged', async () => {
    const job = await client().fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: 'file-abc123',
      hyperparameters: { n_epochs: 'auto' },
      integrations: [TRACKER('alpha'), TRACKER('beta')],
      seed: 7,
    });
    expect(job).toMatchObject({
      object: 'fine_tuning.job',
      id: expect.stringMatching(/^ftjob-/),
      model: 'gpt-4o-mini-2024-07-18',
      status: 'validating_files',
      hyperparameters: { n_epochs: 'auto' },
      training_file: 'file-abc123',
      validation_file: null,
      fine_tuned_model: null,
      finished_at: null,
      trained_tokens: null,
      organization_id: expect.any(String),
      result_files: [],
      seed: 7,
      integrations: [TRACKER('alpha'), TRACKER('beta')],
    });
    expect(mock.requests[0]).toMatchObject({ method: 'POST', path: '/v1/fine_tuning/jobs', headers: { authorization: 'Bearer sk-ft' } });

    const page = await client().fineTuning.jobs.list({ limit: 10 });
    expect(page.data.map((item) => item.id)).toContain(job.id);
    expect((await client().fineTuning.jobs.retrieve(job.id)).status).toBe('validating_files');
    const cancelled = await client().fineTuning.jobs.cancel(job.id);
    expect(cancelled).toMatchObject({ object: 'fine_tuning.job', id: job.id, status: 'cancelled', finished_at: expect.any(Number) });

    const events = await client().fineTuning.jobs.listEvents(job.id);
    expect(events.data[0]).toMatchObject({ object: 'fine_tuning.job.event', message: 'Fine-tuning job cancelled' });

    await gateway.flushLogs();
    const logs = await call(gateway, '/v1/logs?include_bodies=false&limit=10');
    const operations = logs.body.data.map((row: { operation: string }) => row.operation);
    expect(operations).toEqual(
      expect.arrayContaining([
        'fine_tuning.jobs.create',
        'fine_tuning.jobs.list',
        'fine_tuning.jobs.retrieve',
        'fine_tuning.jobs.cancel',
        'fine_tuning.jobs.events',
      ]),
    );
    const created = logs.body.data.find((row: { operation: string }) => row.operation === 'fine_tuning.jobs.create');
    expect(created).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini-2024-07-18', status_code: 200, cost_usd: null });
  });

  it('reports a finished job with its checkpoints, and a failed one with its error', async () => {
    const done = await client().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-succeeded' });
    expect(done).toMatchObject({ status: 'succeeded', fine_tuned_model: expect.stringMatching(/^ft:gpt-4o-mini/), trained_tokens: 12345 });
    const checkpoints = await client().fineTuning.jobs.checkpoints.list(done.id);
    expect(checkpoints.data.map((checkpoint) => checkpoint.step_number)).toEqual([20, 10]);
    expect(checkpoints.data[0]).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: done.id, metrics: { step: 20 } });

    const failed = await client().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-invalid' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'invalid_training_file', message: expect.any(String), param: 'training_file' } });
    // Cancelling a finished job is the provider's 400, passed through.
    const refused = await client()
      .fineTuning.jobs.cancel(failed.id)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(400);
  });

  it("prices a job's training once, by trained_tokens at the base model's training rate, on the first answer that shows it succeeded", async () => {
    const { data: done, response } = await client().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-succeeded' }).withResponse();
    const created = await logOf(gateway, response.headers.get('x-gateway-request-id'));
    // gpt-4o-mini training: $3 per million trained tokens.
    expect(created).toMatchObject({ operation: 'fine_tuning.jobs.create', prompt_tokens: 12_345, cost_usd: (12_345 * 3) / 1e6 });

    // Reading the job again does not charge it again.
    const { response: again } = await client().fineTuning.jobs.retrieve(done.id).withResponse();
    expect(await logOf(gateway, again.headers.get('x-gateway-request-id'))).toMatchObject({
      operation: 'fine_tuning.jobs.retrieve',
      prompt_tokens: null,
      cost_usd: null,
    });
    const { response: listed } = await client().fineTuning.jobs.list().withResponse();
    expect(await logOf(gateway, listed.headers.get('x-gateway-request-id'))).toMatchObject({ operation: 'fine_tuning.jobs.list', cost_usd: null });

    // A base model without a training price: the tokens are recorded, the cost is unknown (never a made-up 0).
    const { response: unpriced } = await client().fineTuning.jobs.create({ model: 'babbage-002', training_file: 'file-succeeded' }).withResponse();
    expect(await logOf(gateway, unpriced.headers.get('x-gateway-request-id'))).toMatchObject({ prompt_tokens: 12_345, cost_usd: null });
  });

  it('checks a job before sending: at most 5 integrations, hyperparameters a number or "auto", settings under the type', async () => {
    const send = (body: Record<string, unknown>) =>
      call(gateway, '/v1/fine_tuning/jobs', {
        headers: { 'x-gateway-virtual-key': 'openai-prod' },
        body: { model: 'gpt-4o-mini-2024-07-18', training_file: 'file-abc123', ...body },
      });
    const six = Array.from({ length: 6 }, (_, i) => TRACKER(`p${i}`));
    expectError(await send({ integrations: six }), 400, {
      type: 'invalid_request_error',
      param: 'integrations',
      message: 'integrations must contain no more than 5 elements',
    });
    expectError(await send({ hyperparameters: { n_epochs: 'many' } }), 400, {
      type: 'invalid_request_error',
      param: 'hyperparameters.n_epochs',
      message: 'hyperparameters.n_epochs must be "auto" or an integer from 1 to 50',
    });
    expectError(await send({ integrations: [{ type: 'wandb', project: 'flat' }] }), 400, {
      type: 'invalid_request_error',
      param: 'integrations[0].wandb',
      message: /under a member named by its type/,
    });
    expectError(await send({ training_file: undefined }), 400, { type: 'invalid_request_error', param: 'training_file' });
    expect(mock.requests).toHaveLength(0);
    expect((await send({ integrations: six.slice(0, 5), hyperparameters: { n_epochs: 3, batch_size: 'auto', learning_rate_multiplier: 0.5 } })).status).toBe(
      200,
    );
  });

  it('cancel requires x-gateway-virtual-key, even when a provider and its credential are given', async () => {
    const job = await client().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-abc123' });
    mock.reset();
    const headers = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-ft', 'x-gateway-custom-host': `${mock.url}/v1` };
    const response = await call(gateway, `/v1/fine_tuning/jobs/${job.id}/cancel`, { method: 'POST', headers });
    expectError(response, 400, { type: 'invalid_request_error', param: 'x-gateway-virtual-key', message: /needs the x-gateway-virtual-key header/ });
    expect(
      (await call(gateway, `/v1/fine_tuning/jobs/${job.id}/cancel`, { method: 'POST', headers: { 'x-gateway-virtual-key': 'openai-prod' }, apiKey: null }))
        .status,
    ).toBe(401);
    expect(mock.requests).toHaveLength(0);
  });

  it('reaches Azure OpenAI at {resource}/openai/fine_tuning/jobs with its api-version and api-key', async () => {
    const azure = openai(gateway, { 'x-gateway-virtual-key': 'azure-ft' });
    const job = await azure.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-abc123' });
    await azure.fineTuning.jobs.retrieve(job.id);
    expect(mock.requests.map((r) => [r.method, r.path, r.query['api-version'], r.headers['api-key']])).toEqual([
      ['POST', '/openai/fine_tuning/jobs', '2024-10-21', 'azure-secret'],
      ['GET', `/openai/fine_tuning/jobs/${job.id}`, '2024-10-21', 'azure-secret'],
    ]);
  });

  it('lists and retrieves models from the provider the routing headers name', async () => {
    const models = await client().models.list();
    expect(models.data.map((model) => model.id)).toContain('gpt-4o-mini');
    expect(await client().models.retrieve('gpt-4o')).toMatchObject({ id: 'gpt-4o', object: 'model' });
    // Anthropic and Gemini have lists now (test/operations/anthropic-models.e2e-spec.ts); Fireworks' API has none in OpenAI's shape.
    const fireworks = await call(gateway, '/v1/models', { headers: { 'x-gateway-provider': 'fireworks-ai', authorization: 'Bearer fw-key' } });
    expectError(fireworks, 400, { type: 'invalid_request_error', message: 'Provider fireworks-ai does not offer a model list' });
    await gateway.flushLogs();
    const log = await logOf(gateway, fireworks.headers.get('x-gateway-request-id'));
    expect(log).toMatchObject({ operation: 'models.list', status_code: 400 });
  });
});
