import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ResourceAction, ResourceOperations, ResourceSpec } from '../routing/resource-operation';
import { UploadOperations, UploadSpec } from '../routing/upload-operation';
import { UpstreamAttempt } from '../upstream/upstream-attempt';

const FILES: ResourceSpec = { capability: 'files', title: 'files', usage: () => null };
const id = (value: string) => `/${encodeURIComponent(value)}`;

/**
 * `/v1/files`: files at the provider the routing headers name (training data for
 * fine-tuning, documents for vector stores, batch inputs). An upload streams through as
 * the client sends it; a file's content streams back. The log keeps the form's fields and
 * the file's name and size, never its bytes.
 */
@ApiTags('files')
@ApiSecurity('gateway-api-key')
@Controller('v1/files')
@UseGuards(ProviderRoutingGuard)
export class FilesController {
  private readonly upload: UploadSpec;

  constructor(
    private readonly resources: ResourceOperations,
    private readonly uploads: UploadOperations,
    attempts: UpstreamAttempt,
  ) {
    this.upload = {
      request: (target) => attempts.capability(target, FILES).request('POST', '', '', target),
      usage: () => null,
    };
  }

  @Post()
  @HttpCode(200)
  @Operation('files.create')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Upload a file (multipart: file, purpose), streamed through to the provider' })
  async create(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.uploads.run(context, req, this.upload, { file: true, fields: ['purpose'] }));
  }

  @Get()
  @Operation('files.list')
  @ApiOperation({ summary: 'List files' })
  list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: '', query: rawQuery(req) });
  }

  @Get(':id')
  @Operation('files.retrieve')
  @ApiOperation({ summary: "Retrieve a file's metadata" })
  retrieve(@Ctx() context: RequestContext, @Param('id') file: string, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: id(file), query: '' });
  }

  @Delete(':id')
  @Operation('files.delete')
  @ApiOperation({ summary: 'Delete a file' })
  delete(@Ctx() context: RequestContext, @Param('id') file: string, @Res() res: Response) {
    return this.run(context, res, { method: 'DELETE', path: id(file), query: '' });
  }

  @Get(':id/content')
  @Operation('files.content')
  @ApiProduces('application/octet-stream')
  @ApiOperation({ summary: "A file's content, streamed back as the provider sends it" })
  content(@Ctx() context: RequestContext, @Param('id') file: string, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: `${id(file)}/content`, query: '', binary: true });
  }

  private async run(context: RequestContext, res: Response, action: ResourceAction): Promise<void> {
    sendGatewayResult(res, context, await this.resources.run(context, FILES, action));
  }
}
