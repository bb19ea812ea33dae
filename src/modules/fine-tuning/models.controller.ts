import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ModelListService } from './model-list.service';

/**
 * `GET /v1/models`: the model list of the provider the routing headers name, in OpenAI's
 * shape, or Anthropic's when the request carries `anthropic-version` / `vendor-version`.
 */
@ApiTags('models')
@ApiSecurity('gateway-api-key')
@Controller('v1/models')
@UseGuards(ProviderRoutingGuard)
export class ModelsController {
  constructor(private readonly models: ModelListService) {}

  @Get()
  @Operation('models.list')
  @ApiOperation({ summary: "List the provider's models (Anthropic's shape with anthropic-version or vendor-version)" })
  async list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.models.run(context, rawQuery(req)));
  }

  @Get(':model')
  @Operation('models.retrieve')
  @ApiOperation({ summary: 'Retrieve one model of the provider' })
  async retrieve(@Ctx() context: RequestContext, @Param('model') model: string, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.models.run(context, '', model));
  }
}
