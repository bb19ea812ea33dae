/**
 * The mock upstream's fine-tuning jobs and model routes, in OpenAI's wire format, with
 * the jobs kept in memory per mock server.
 *
 * Routes (also under Azure's `/openai/...?api-version=`)
 *   POST /v1/fine_tuning/jobs                      create: a `fine_tuning.job`, status "validating_files"
 *   GET  /v1/fine_tuning/jobs?after&limit          {object: "list", data (newest first), has_more}
 *   GET  /v1/fine_tuning/jobs/{id}                 the job
 *   POST /v1/fine_tuning/jobs/{id}/cancel          the job, status "cancelled" (400 once finished)
 *   GET  /v1/fine_tuning/jobs/{id}/events          `fine_tuning.job.event`s, newest first
 *   GET  /v1/fine_tuning/jobs/{id}/checkpoints     `fine_tuning.job.checkpoint`s (a succeeded job has two)
 *   GET  /v1/models, /v1/models/{id}               the model list, one model
 *
 * Switches: training_file "file-succeeded" makes a finished job (fine_tuned_model,
 * trained_tokens, result_files); "file-invalid" a failed one (`error` {code, message,
 * param}). An unknown job id is OpenAI's 404.
 */
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { AZURE_MISSING_API_VERSION_BODY, BAD_JSON_BODY, errorBody, MODELS_LIST_BODY, modelObject } from './mock-openai-chunks';
// A cycle (mock-upstream.ts imports this file), harmless: calls happen per request.
import { sendJson } from './mock-upstream';

const JOBS = /^(?:\/v1|\/openai)?\/fine_tuning\/jobs(?:\/([^/]+)(\/cancel|\/events|\/checkpoints)?)?$/;
const MODELS = /^(?:\/v1|\/openai)?\/models(?:\/([^/]+))?$/;
const CREATED = 1_732_000_000;

interface Job extends Record<string, unknown> {
  id: string;
  status: string;
}

const jobsByServer = new WeakMap<Map<string, number>, Map<string, Job>>();

/** Serves fine-tuning and model routes; false for any other path. */
export function serveOpenAIFineTuning(res: http.ServerResponse, call: MockCall): boolean {
  const jobRoute = JOBS.exec(call.path);
  const modelRoute = jobRoute ? null : MODELS.exec(call.path);
  if (!jobRoute && !modelRoute) return false;
  if (call.path.startsWith('/openai/') && !new URLSearchParams(call.rawQuery).has('api-version')) {
    sendJson(res, 404, AZURE_MISSING_API_VERSION_BODY);
    return true;
  }
  if (modelRoute) {
    if (call.method !== 'GET') return false;
    sendJson(res, 200, modelRoute[1] ? JSON.stringify(modelObject(decodeURIComponent(modelRoute[1]))) : MODELS_LIST_BODY);
    return true;
  }
  // The flaky counters' map is one per mock server and cleared with it: the jobs live beside it.
  let jobs = jobsByServer.get(call.flakyFailures);
  if (!jobs) jobsByServer.set(call.flakyFailures, (jobs = new Map()));
  const [, rawId, sub] = jobRoute!;
  const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  if (id === undefined) {
    if (call.method === 'POST') create(res, call, jobs);
    else if (call.method === 'GET') list(res, [...jobs.values()].reverse(), call.rawQuery);
    else return false;
    return true;
  }
  const job = jobs.get(id);
  if (!job) {
    sendJson(res, 404, errorBody(`Could not find fine-tune: ${id}`, 'invalid_request_error', 'fine_tune_not_found', 'fine_tune_id'));
    return true;
  }
  if (sub === undefined && call.method === 'GET') sendJson(res, 200, JSON.stringify(job));
  else if (sub === '/cancel' && call.method === 'POST') cancel(res, job);
  else if (sub === '/events' && call.method === 'GET') list(res, events(job), call.rawQuery);
  else if (sub === '/checkpoints' && call.method === 'GET') list(res, checkpoints(job), call.rawQuery);
  else return false;
  return true;
}

function create(res: http.ServerResponse, call: MockCall, jobs: Map<string, Job>): void {
  const body = call.body;
  if (call.badJson || body === null || typeof body !== 'object') return sendJson(res, 400, BAD_JSON_BODY);
  for (const field of ['model', 'training_file']) {
    if (typeof body[field] !== 'string')
      return sendJson(res, 400, errorBody(`Missing required parameter: '${field}'.`, 'invalid_request_error', 'missing_required_parameter', field));
  }
  if (Array.isArray(body.integrations) && body.integrations.length > 5) {
    return sendJson(res, 400, errorBody('Too many integrations: at most 5 are allowed.', 'invalid_request_error', 'invalid_value', 'integrations'));
  }
  const id = `ftjob-${String(jobs.size + 1).padStart(6, '0')}mock`;
  const hyperparameters = { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto', ...(body.hyperparameters ?? {}) };
  const job: Job = {
    object: 'fine_tuning.job',
    id,
    model: body.model,
    created_at: CREATED + jobs.size,
    error: null,
    fine_tuned_model: null,
    finished_at: null,
    hyperparameters,
    organization_id: 'org-mock',
    result_files: [],
    status: 'validating_files',
    trained_tokens: null,
    training_file: body.training_file,
    validation_file: body.validation_file ?? null,
    integrations: body.integrations ?? null,
    seed: Number.isInteger(body.seed) ? body.seed : 42,
    estimated_finish: null,
    method: { type: 'supervised', supervised: { hyperparameters } },
    metadata: body.metadata ?? null,
    user_provided_suffix: body.suffix ?? null,
  };
  if (body.training_file === 'file-succeeded') {
    Object.assign(job, {
      status: 'succeeded',
      fine_tuned_model: `ft:${body.model}:org-mock::${id.slice(6, 12)}`,
      finished_at: CREATED + 3600,
      trained_tokens: 12_345,
      result_files: ['file-result-mock'],
    });
  } else if (body.training_file === 'file-invalid') {
    Object.assign(job, {
      status: 'failed',
      finished_at: CREATED + 60,
      error: { code: 'invalid_training_file', message: 'The training file has 3 lines that are not valid JSON.', param: 'training_file' },
    });
  }
  jobs.set(id, job);
  sendJson(res, 200, JSON.stringify(job));
}

function cancel(res: http.ServerResponse, job: Job): void {
  if (['succeeded', 'failed', 'cancelled'].includes(job.status)) {
    return sendJson(
      res,
      400,
      errorBody(`Job has already ${job.status === 'cancelled' ? 'been cancelled' : 'completed'}.`, 'invalid_request_error', 'invalid_state', null),
    );
  }
  Object.assign(job, { status: 'cancelled', finished_at: CREATED + 120 });
  sendJson(res, 200, JSON.stringify(job));
}

function events(job: Job): Record<string, unknown>[] {
  const event = (n: number, level: string, message: string) => ({
    object: 'fine_tuning.job.event',
    id: `ftevent-${job.id.slice(6)}-${n}`,
    created_at: CREATED + n,
    level,
    message,
    data: {},
    type: 'message',
  });
  const list = [event(1, 'info', `Created fine-tuning job: ${job.id}`), event(2, 'info', `Validating training file: ${String(job.training_file)}`)];
  if (job.status === 'succeeded') list.push(event(3, 'info', 'The job has successfully completed'));
  if (job.status === 'failed') list.push(event(3, 'error', 'The job failed due to an invalid training file.'));
  if (job.status === 'cancelled') list.push(event(3, 'info', 'Fine-tuning job cancelled'));
  return list.reverse();
}

function checkpoints(job: Job): Record<string, unknown>[] {
  if (job.status !== 'succeeded') return [];
  return [20, 10].map((step) => ({
    object: 'fine_tuning.job.checkpoint',
    id: `ftckpt_${job.id.slice(6)}${step}`,
    created_at: CREATED + step * 60,
    fine_tuned_model_checkpoint: `${String(job.fine_tuned_model)}:ckpt-step-${step}`,
    fine_tuning_job_id: job.id,
    metrics: {
      step,
      train_loss: 1 / step,
      train_mean_token_accuracy: 0.9,
      valid_loss: 1.2 / step,
      valid_mean_token_accuracy: 0.85,
      full_valid_loss: 1.1 / step,
      full_valid_mean_token_accuracy: 0.86,
    },
    step_number: step,
  }));
}

/** OpenAI's cursor pages: `after` an id, `limit` (default 20), `has_more`. */
function list(res: http.ServerResponse, items: Record<string, unknown>[], rawQuery: string): void {
  const query = new URLSearchParams(rawQuery);
  const after = query.get('after');
  const limit = Number(query.get('limit') ?? 20);
  const start = after ? items.findIndex((item) => item.id === after) + 1 : 0;
  const page = items.slice(start, start + limit);
  sendJson(res, 200, JSON.stringify({ object: 'list', data: page, has_more: start + limit < items.length }));
}
