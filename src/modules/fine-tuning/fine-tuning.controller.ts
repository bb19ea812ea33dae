import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { GatewayError } from '../../common/errors/gateway-error';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { rawQuery } from '../../common/http/raw-query';
import { sendGatewayResult } from '../routing/gateway-result';
import { ResourceAction, ResourceOperations, ResourceSpec } from '../routing/resource-operation';
import { FineTuningJobCreateDto } from './dto/fine-tuning-job-create.dto';
import { TrainingCharges } from './training-charges';

/**
 * `/v1/fine_tuning/jobs`: OpenAI's fine-tuning API through the routing headers (a
 * virtual key, or a provider and its credential). Creation is checked (integrations at
 * most 5, hyperparameters a number or "auto"); every answer passes through as the
 * provider sent it. Cancel names its virtual key explicitly: the job lives with the
 * provider account that key stands for.
 */
@ApiTags('fine-tuning')
@ApiSecurity('gateway-api-key')
@Controller('v1/fine_tuning/jobs')
@UseGuards(ProviderRoutingGuard)
export class FineTuningController {
  /** A job reports `trained_tokens`, not a usage object: TrainingCharges prices it once it has succeeded. */
  private readonly spec: ResourceSpec;

  constructor(
    private readonly resources: ResourceOperations,
    charges: TrainingCharges,
  ) {
    this.spec = {
      capability: 'fineTuning',
      title: 'fine-tuning',
      usage: () => null,
      onAnswer: (context, json, target) => charges.charge(context, json, target),
    };
  }

  @Post()
  @HttpCode(200)
  @Operation('fine_tuning.jobs.create')
  @ApiOperation({ summary: 'Create a fine-tuning job' })
  async create(@Ctx() context: RequestContext, @Body() body: FineTuningJobCreateDto, @Res() res: Response): Promise<void> {
    await this.run(context, res, { method: 'POST', path: '', query: '', body: body });
  }

  @Get()
  @Operation('fine_tuning.jobs.list')
  @ApiOperation({ summary: 'List fine-tuning jobs (after, limit)' })
  async list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.run(context, res, { method: 'GET', path: '', query: rawQuery(req) });
  }

  @Get(':id')
  @Operation('fine_tuning.jobs.retrieve')
  @ApiOperation({ summary: 'Retrieve a fine-tuning job' })
  async retrieve(@Ctx() context: RequestContext, @Param('id') id: string, @Res() res: Response): Promise<void> {
    await this.run(context, res, { method: 'GET', path: `/${encodeURIComponent(id)}`, query: '' });
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Operation('fine_tuning.jobs.cancel')
  @ApiHeader({ name: 'x-gateway-virtual-key', required: true, description: 'The virtual key of the provider account that runs the job' })
  @ApiOperation({ summary: 'Cancel a fine-tuning job; returns the job' })
  async cancel(
    @Ctx() context: RequestContext,
    @Param('id') id: string,
    @Headers('x-gateway-virtual-key') virtualKey: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    if (!virtualKey) {
      throw GatewayError.invalidRequest(
        'Cancelling a fine-tuning job needs the x-gateway-virtual-key header: the virtual key of the provider account that runs it',
        'x-gateway-virtual-key',
      );
    }
    await this.run(context, res, { method: 'POST', path: `/${encodeURIComponent(id)}/cancel`, query: '' });
  }

  @Get(':id/events')
  @Operation('fine_tuning.jobs.events')
  @ApiOperation({ summary: 'List the events of a fine-tuning job (after, limit)' })
  async events(@Ctx() context: RequestContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.run(context, res, { method: 'GET', path: `/${encodeURIComponent(id)}/events`, query: rawQuery(req) });
  }

  @Get(':id/checkpoints')
  @Operation('fine_tuning.jobs.checkpoints')
  @ApiOperation({ summary: 'List the checkpoints of a fine-tuning job (after, limit)' })
  async checkpoints(@Ctx() context: RequestContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.run(context, res, { method: 'GET', path: `/${encodeURIComponent(id)}/checkpoints`, query: rawQuery(req) });
  }

  private async run(context: RequestContext, res: Response, action: ResourceAction): Promise<void> {
    sendGatewayResult(res, context, await this.resources.run(context, this.spec, action));
  }
}
