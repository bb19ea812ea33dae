import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from './gateway-result';
import type { ResourceOperation } from '../../providers/provider-adapter';
import type { NormalizedUsage } from '../../providers/usage';
import { binaryResult, UpstreamAttempt } from '../upstream/upstream-attempt';
import type { AnswerOutcome } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';
import { RouteExecutor } from './route-executor';

/** A REST resource of the providers (fine-tuning jobs, models, files, vector stores), as the attempt steps need it. */
export interface ResourceSpec {
  capability: ResourceOperation;
  title: string;
  usage(usage: Record<string, any> | undefined): NormalizedUsage | null;
  /** Runs on a JSON answer before it goes back; what it returns is added to the outcome (a fine-tuning job's training charged once it has succeeded). */
  onAnswer?(context: RequestContext, json: Record<string, any>, target: RouteTarget): Promise<Partial<AnswerOutcome> | null>;
}

/** One call on a resource: method, path below the resource's root (URL-encoded), raw query, JSON body for POSTs, or a binary answer. */
export interface ResourceAction {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query: string;
  body?: Record<string, unknown>;
  /** The answer is bytes (a file's content), streamed to the client rather than read as JSON. */
  binary?: boolean;
}

/**
 * Calls on a provider's REST resources (create, list, retrieve, cancel …): the route
 * executor picks the target (a body's `model` may route, as on creation), the
 * provider's JSON passes through, the log holds the object. Never cached.
 */
@Injectable()
export class ResourceOperations {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  run(context: RequestContext, spec: ResourceSpec, action: ResourceAction): Promise<GatewayResult> {
    return this.executor.execute(
      context.begin({ body: action.body }),
      action.body ?? {},
      async (target, upstreamBody, attempt) => {
        const capability = this.attempts.capability(target, spec);
        const request = capability.request(action.method, action.path, action.query, target, action.body ? upstreamBody : undefined);
        const answer = await this.attempts.sendRequest(context, target, request);
        if (action.binary) return binaryResult(answer, 'file');
        const result = await this.attempts.readJson(context, attempt, answer, spec);
        if (result.kind !== 'json') return result;
        // A call without a model in its body is logged with the one the answer names (a job's).
        attempt.model ??= result.outcome.servedModel;
        const charged = await spec.onAnswer?.(context, result.outcome.responseBody as Record<string, any>, target);
        return charged ? { ...result, outcome: { ...result.outcome, ...charged } } : result;
      },
      { cacheable: false },
    );
  }
}
