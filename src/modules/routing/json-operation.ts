import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from './gateway-result';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import { RouteExecutor } from './route-executor';

/**
 * An operation answered with one JSON body (embeddings, image generations): the route
 * executor picks targets, each attempt passes the provider's bytes through. Such an
 * operation needs only its OperationSpec and a controller.
 */
@Injectable()
export class JsonOperations {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  run(context: RequestContext, body: object & { user?: string }, operation: OperationSpec): Promise<GatewayResult> {
    const opened = context.begin({ body, user: body.user });
    return this.executor.execute(opened, body, (target, upstreamBody, attempt) => this.attempts.json(context, attempt, target, upstreamBody, operation));
  }
}
