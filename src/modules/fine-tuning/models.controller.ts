import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../common/context/request-context';
import { Ctx, Operation } from '../../common/context/request-context.decorator';
import { ProviderRoutingGuard } from '../../common/guards/provider-routing.guard';
import { sendGatewayResult } from '../../common/http/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ResourceOperations, ResourceSpec } from '../routing/resource-operation.service';

const MODELS: ResourceSpec = { capability: 'models', title: 'a model list', usage: () => null };

/** `GET /v1/models`: the model list of the provider the routing headers name, as it sends it. */
@ApiTags('models')
@ApiSecurity('gateway-api-key')
@Controller('v1/models')
@UseGuards(ProviderRoutingGuard)
export class ModelsController {
  constructor(private readonly resources: ResourceOperations) {}

  @Get()
  @Operation('models.list')
  @ApiOperation({ summary: "List the provider's models" })
  async list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.run(context, MODELS, { method: 'GET', path: '', query: rawQuery(req) }));
  }

  @Get(':model')
  @Operation('models.retrieve')
  @ApiOperation({ summary: 'Retrieve one model of the provider' })
  async retrieve(@Ctx() context: RequestContext, @Param('model') model: string, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.run(context, MODELS, { method: 'GET', path: `/${encodeURIComponent(model)}`, query: '' }));
  }
}
