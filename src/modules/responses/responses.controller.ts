import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ResponseCreateDto } from './dto/response-create.dto';
import { ResponseResourceAction, ResponsesService } from './responses.service';

@ApiTags('responses')
@ApiSecurity('gateway-api-key')
@Controller('v1/responses')
@UseGuards(ProviderRoutingGuard)
export class ResponsesController {
  constructor(private readonly responses: ResponsesService) {}

  @Post()
  @HttpCode(200)
  @Operation('responses')
  @ApiOperation({ summary: "Create a model response (OpenAI's Responses API); stream: true relays the typed event stream" })
  async create(@Ctx() context: RequestContext, @Body() body: ResponseCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.responses.create(context, body));
  }

  @Get(':id')
  @Operation('responses.retrieve')
  @ApiOperation({ summary: 'Retrieve a stored response from the provider the routing headers name' })
  async retrieve(@Ctx() context: RequestContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.resource(context, res, { method: 'GET', id, suffix: '', query: rawQuery(req) });
  }

  @Delete(':id')
  @Operation('responses.delete')
  @ApiOperation({ summary: 'Delete a stored response' })
  async delete(@Ctx() context: RequestContext, @Param('id') id: string, @Res() res: Response): Promise<void> {
    await this.resource(context, res, { method: 'DELETE', id, suffix: '', query: '' });
  }

  @Get(':id/input_items')
  @Operation('responses.input_items')
  @ApiOperation({ summary: 'List the input items of a stored response' })
  async inputItems(@Ctx() context: RequestContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.resource(context, res, { method: 'GET', id, suffix: '/input_items', query: rawQuery(req) });
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Operation('responses.cancel')
  @ApiOperation({ summary: 'Cancel a background response' })
  async cancel(@Ctx() context: RequestContext, @Param('id') id: string, @Res() res: Response): Promise<void> {
    await this.resource(context, res, { method: 'POST', id, suffix: '/cancel', query: '' });
  }

  private async resource(context: RequestContext, res: Response, action: ResponseResourceAction): Promise<void> {
    sendGatewayResult(res, context, await this.responses.resource(context, action));
  }
}
