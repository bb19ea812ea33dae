import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../common/context/request-context';
import type { GatewayResult } from '../../common/http/gateway-result';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { RouteExecutor } from '../routing/route-executor.service';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import type { EmbeddingCreateDto } from './dto/embedding-create.dto';

const EMBEDDINGS: OperationSpec = { capability: 'embeddings', title: 'embeddings', usage: usageFromOpenAI };

/** `embeddings`: one JSON answer per attempt, passed through; usage has prompt tokens only. */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  create(context: RequestContext, body: EmbeddingCreateDto): Promise<GatewayResult> {
    context.requestBody = body;
    context.user = body.user ?? context.user;
    return this.executor.execute(context, body, (target, upstreamBody) => this.attempts.json(context, target, upstreamBody, EMBEDDINGS));
  }
}
