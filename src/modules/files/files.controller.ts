import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { MultipartPeek } from '../../common/http/multipart-peek';
import { GatewayError } from '../../common/errors/gateway-error';
import { routeRequest } from '../routing/provider-routing.guard';
import { RouteResolver } from '../routing/route-resolver';
import { sendGatewayResult } from '../routing/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ResourceAction, ResourceOperations, ResourceSpec } from '../routing/resource-operation';
import { UploadOperations, UploadSpec } from '../routing/upload-operation';
import { UpstreamAttempt } from '../upstream/upstream-attempt';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { BatchFiles, fileReaderOf, isGatewayFileId } from '../batches/batch-files.service';

const FILES: ResourceSpec = { capability: 'files', title: 'files', usage: () => null };
const id = (value: string) => `/${encodeURIComponent(value)}`;
/** The purposes of the files the gateway keeps: a list of these is the gateway's, not the provider's. */
const GATEWAY_PURPOSES = new Set(['batch', 'batch_output', 'batch_error']);

/**
 * `/v1/files`: files at the provider the routing headers name (training data for
 * fine-tuning, documents for vector stores), streamed through as the client sends them; a
 * file's content streams back. The log keeps the form's fields and the file's name and
 * size, never its bytes. A file uploaded with `purpose: "batch"` is the gateway's own
 * (BatchFiles), so that its batch can run at any provider; so are a batch's output and error
 * files. Their ids (`file-gw…`) are answered here, with no routing.
 */
@ApiTags('files')
@ApiSecurity('gateway-api-key')
@Controller('v1/files')
export class FilesController {
  private readonly upload: UploadSpec;
  private readonly uploadLimitBytes: number;

  constructor(
    private readonly resources: ResourceOperations,
    private readonly uploads: UploadOperations,
    private readonly resolver: RouteResolver,
    private readonly batchFiles: BatchFiles,
    attempts: UpstreamAttempt,
    config: ConfigService<Environment, true>,
  ) {
    this.uploadLimitBytes = config.get('UPLOAD_LIMIT_BYTES', { infer: true });
    this.upload = {
      request: (target) => attempts.capability(target, FILES).request('POST', '', '', target),
      usage: () => null,
    };
  }

  /** The form is read up to its `purpose` (MultipartPeek): a batch file stays here, any other streams through to the provider. */
  @Post()
  @HttpCode(200)
  @Operation('files.create')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Upload a file (multipart: file, purpose): a batch file is kept by the gateway, any other streamed through to the provider' })
  async create(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    const peek = await MultipartPeek.untilField(req, 'purpose', this.uploadLimitBytes);
    if (peek.complete && peek.fields.purpose === undefined) {
      peek.consumed();
      throw GatewayError.invalidRequest("The form has no 'purpose' field", 'purpose', 'missing_required_parameter');
    }
    if (peek.fields.purpose === 'batch') {
      const file = await peek.readFile(this.batchFiles.limitBytes);
      context.logRequestAs({ purpose: 'batch', files: [{ field: 'file', filename: file.filename, bytes: file.content.length }] });
      res.status(200).json(await this.batchFiles.store(context.principal!, file, peek.fields));
      return;
    }
    await this.route(context, req);
    sendGatewayResult(res, context, await this.uploads.run(context, req, this.upload, { file: true, fields: ['purpose'] }, peek.consumed()));
  }

  @Get()
  @Operation('files.list')
  @ApiOperation({ summary: 'List files (purpose "batch", "batch_output" or "batch_error": the gateway\'s own)' })
  async list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    const purpose = typeof req.query.purpose === 'string' ? req.query.purpose : undefined;
    if (purpose && GATEWAY_PURPOSES.has(purpose)) {
      res.status(200).json(await this.batchFiles.list(fileReaderOf(context.principal!), req.query));
      return;
    }
    return this.run(context, req, res, { method: 'GET', path: '', query: rawQuery(req) });
  }

  @Get(':id')
  @Operation('files.retrieve')
  @ApiOperation({ summary: "Retrieve a file's metadata" })
  async retrieve(@Ctx() context: RequestContext, @Req() req: Request, @Param('id') file: string, @Res() res: Response): Promise<void> {
    if (isGatewayFileId(file)) {
      res.status(200).json(await this.batchFiles.retrieve(fileReaderOf(context.principal!), file));
      return;
    }
    return this.run(context, req, res, { method: 'GET', path: id(file), query: '' });
  }

  @Delete(':id')
  @Operation('files.delete')
  @ApiOperation({ summary: 'Delete a file' })
  async delete(@Ctx() context: RequestContext, @Req() req: Request, @Param('id') file: string, @Res() res: Response): Promise<void> {
    if (isGatewayFileId(file)) {
      res.status(200).json(await this.batchFiles.delete(fileReaderOf(context.principal!), file));
      return;
    }
    return this.run(context, req, res, { method: 'DELETE', path: id(file), query: '' });
  }

  @Get(':id/content')
  @Operation('files.content')
  @ApiProduces('application/octet-stream')
  @ApiOperation({ summary: "A file's content, streamed back as the provider sends it (a batch's files written from its lines)" })
  async content(@Ctx() context: RequestContext, @Req() req: Request, @Param('id') file: string, @Res() res: Response): Promise<void> {
    if (isGatewayFileId(file)) {
      const content = await this.batchFiles.content(fileReaderOf(context.principal!), file);
      res.status(200).setHeader('content-type', 'application/octet-stream');
      await pipeline(content, res);
      return;
    }
    return this.run(context, req, res, { method: 'GET', path: `${id(file)}/content`, query: '', binary: true });
  }

  private async run(context: RequestContext, req: Request, res: Response, action: ResourceAction): Promise<void> {
    await this.route(context, req);
    sendGatewayResult(res, context, await this.resources.run(context, FILES, action));
  }

  /** The provider's files are routed like any model operation (the guard's step, here once the file is known not to be the gateway's). */
  private route(context: RequestContext, req: Request): Promise<void> {
    return routeRequest(this.resolver, context, req.headers, undefined);
  }
}
