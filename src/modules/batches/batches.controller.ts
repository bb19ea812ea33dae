import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Permission } from '../../context/request-context.decorator';
import { completionWindowMs, BatchCreateDto, MessageBatchCreateDto } from './dto/batch-create.dto';
import { BatchesService } from './batches.service';
import { BatchFiles, fileReaderOf } from './batch-files.service';
import { BatchResults } from './batch-results';
import { ANTHROPIC_BATCH_ENDPOINT, parseAnthropicRequests, parseOpenAiInput } from './batch-lines';
import { GatewayError } from '../../common/errors/gateway-error';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';

/** Anthropic's batches expire 24 hours after they are created. */
const ANTHROPIC_WINDOW_MS = 24 * 3_600_000;

/**
 * `/v1/batches` in OpenAI's shape (CONTRACT section 17): a batch of the lines of a file
 * uploaded with `purpose: "batch"`, read back, listed and cancelled; its results are the
 * output and error files (`/v1/files/{id}/content`).
 */
@ApiTags('batches')
@ApiSecurity('gateway-api-key')
@Controller('v1/batches')
@Permission('models.call')
export class BatchesController {
  constructor(
    private readonly batches: BatchesService,
    private readonly files: BatchFiles,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a batch from a JSONL file uploaded with purpose "batch"' })
  async create(@Ctx() context: RequestContext, @Body() body: BatchCreateDto): Promise<Record<string, unknown>> {
    const content = await this.files.input(fileReaderOf(context.principal!), body.input_file_id);
    return this.batches.create(context, {
      shape: 'openai',
      endpoint: body.endpoint,
      completionWindow: body.completion_window,
      completionWindowMs: completionWindowMs(body.completion_window)!,
      inputFileId: body.input_file_id,
      metadata: body.metadata ?? null,
      lines: parseOpenAiInput(content, body.endpoint),
    });
  }

  @Get()
  @ApiOperation({ summary: 'List batches, newest first (limit, after)' })
  list(@Ctx() context: RequestContext, @Query() query: Record<string, string>) {
    return this.batches.list(fileReaderOf(context.principal!), 'openai', { limit: query.limit, after: query.after });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Retrieve a batch' })
  retrieve(@Ctx() context: RequestContext, @Param('id') id: string) {
    return this.batches.retrieve(fileReaderOf(context.principal!), 'openai', id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a batch (409 once it has ended)' })
  cancel(@Ctx() context: RequestContext, @Param('id') id: string) {
    return this.batches.cancel(context, fileReaderOf(context.principal!), 'openai', id);
  }
}

/** `/v1/messages/batches` in Anthropic's shape: inline requests, read back, listed, cancelled, and their results as JSONL. */
@ApiTags('batches')
@ApiSecurity('gateway-api-key')
@Controller('v1/messages/batches')
@Permission('models.call')
export class MessageBatchesController {
  constructor(
    private readonly batches: BatchesService,
    private readonly resultLines: BatchResults,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a Message Batch' })
  create(@Ctx() context: RequestContext, @Body() body: MessageBatchCreateDto): Promise<Record<string, unknown>> {
    return this.batches.create(context, {
      shape: 'anthropic',
      endpoint: ANTHROPIC_BATCH_ENDPOINT,
      completionWindow: '24h',
      completionWindowMs: ANTHROPIC_WINDOW_MS,
      inputFileId: null,
      metadata: null,
      lines: parseAnthropicRequests(body.requests),
    });
  }

  @Get()
  @ApiOperation({ summary: 'List Message Batches, newest first (limit, after_id, before_id)' })
  list(@Ctx() context: RequestContext, @Query() query: Record<string, string>) {
    return this.batches.list(fileReaderOf(context.principal!), 'anthropic', { limit: query.limit, after: query.after_id, before: query.before_id });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Retrieve a Message Batch' })
  retrieve(@Ctx() context: RequestContext, @Param('id') id: string) {
    return this.batches.retrieve(fileReaderOf(context.principal!), 'anthropic', id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a Message Batch (409 once it has ended)' })
  cancel(@Ctx() context: RequestContext, @Param('id') id: string) {
    return this.batches.cancel(context, fileReaderOf(context.principal!), 'anthropic', id);
  }

  @Get(':id/results')
  @ApiProduces('application/x-jsonl')
  @ApiOperation({ summary: "A Message Batch's results, one JSON object per line, once it has ended" })
  async results(@Ctx() context: RequestContext, @Param('id') id: string, @Res() res: Response): Promise<void> {
    const batch = await this.batches.row(fileReaderOf(context.principal!), 'anthropic', id);
    if (!batch.completed_at && !batch.cancelled_at && !batch.expired_at && !batch.failed_at)
      throw GatewayError.invalidRequest(`Batch ${id} is still processing: its results are ready once it has ended`, null, 'batch_not_ended');
    res.status(200).setHeader('content-type', 'application/x-jsonl');
    await pipeline(Readable.from(this.resultLines.anthropicResults(id)), res);
  }
}
