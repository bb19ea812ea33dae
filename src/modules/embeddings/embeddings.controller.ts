import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { usageFromOpenAI } from '../../providers/openai-usage';
import { JsonOperations } from '../routing/json-operation';
import type { OperationSpec } from '../upstream/upstream-attempt';
import { EmbeddingCreateDto } from './dto/embedding-create.dto';

/** Embeddings report prompt tokens only. */
export const EMBEDDINGS: OperationSpec = { capability: 'embeddings', title: 'embeddings', usage: usageFromOpenAI };

@ApiTags('embeddings')
@ApiSecurity('gateway-api-key')
@Controller('v1')
export class EmbeddingsController {
  constructor(private readonly operations: JsonOperations) {}

  @Post('embeddings')
  @HttpCode(200)
  @Operation('embeddings')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: 'Create embeddings (OpenAI format)' })
  async create(@Ctx() context: RequestContext, @Body() body: EmbeddingCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.operations.run(context, body, EMBEDDINGS));
  }
}
