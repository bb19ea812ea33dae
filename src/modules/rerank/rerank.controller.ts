import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { JsonOperations } from '../routing/json-operation';
import type { OperationSpec } from '../upstream/upstream-attempt';
import { RerankCreateDto } from './dto/rerank-create.dto';
import { rerankUsage, toRerankAnswer } from './rerank-answer';

/**
 * Rerank answers are put in the gateway's shape whatever the provider. Priced like every
 * operation, from the usage: tokens at the model's input rate where the provider counts
 * them, Cohere's search units at the model's per-search price (local-prices.json, or an
 * override's `per_search`); a model with neither price is logged with `cost_usd: null`.
 */
const RERANK: OperationSpec = { capability: 'rerank', title: 'rerank', usage: rerankUsage, answer: toRerankAnswer };

@ApiTags('rerank')
@ApiSecurity('gateway-api-key')
@Controller('v1')
export class RerankController {
  constructor(private readonly operations: JsonOperations) {}

  @Post('rerank')
  @HttpCode(200)
  @Operation('rerank')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: 'Rank documents by relevance to a query (Cohere and Jina format)' })
  async create(@Ctx() context: RequestContext, @Body() body: RerankCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.operations.run(context, body, RERANK));
  }
}
