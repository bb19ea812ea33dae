import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../common/context/request-context';
import type { GatewayResult } from '../../common/http/gateway-result';
import { usageFromOpenAIImages } from '../../providers/openai-usage';
import { RouteExecutor } from '../routing/route-executor.service';
import { OperationSpec, UpstreamAttempt } from '../upstream/upstream-attempt';
import type { ImageGenerationCreateDto } from './dto/image-generation-create.dto';

const IMAGE_GENERATIONS: OperationSpec = { capability: 'imageGenerations', title: 'image generations', usage: usageFromOpenAIImages };

/** `images.generations`: one JSON answer per attempt, passed through; token usage only from GPT Image models. */
@Injectable()
export class ImagesService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  generate(context: RequestContext, body: ImageGenerationCreateDto): Promise<GatewayResult> {
    context.requestBody = body;
    context.user = body.user ?? context.user;
    return this.executor.execute(context, body, (target, upstreamBody) => this.attempts.json(context, target, upstreamBody, IMAGE_GENERATIONS));
  }
}
