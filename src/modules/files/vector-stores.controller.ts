import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { rawQuery } from '../../common/http/raw-query';
import { ResourceAction, ResourceOperations, ResourceSpec } from '../routing/resource-operation';
import { VectorStoreCreateDto, VectorStoreFileBatchCreateDto, VectorStoreFileCreateDto, VectorStoreSearchDto } from './dto/vector-store.dto';

const VECTOR_STORES: ResourceSpec = { capability: 'vectorStores', title: 'vector stores', usage: () => null };
const id = (value: string) => `/${encodeURIComponent(value)}`;

/**
 * `/v1/vector_stores`: OpenAI's vector stores (what the `file_search` tool of the
 * Responses API searches) at the provider the routing headers name: stores, their
 * files and file batches, and search. The provider's JSON passes through.
 */
@ApiTags('vector stores')
@ApiSecurity('gateway-api-key')
@Controller('v1/vector_stores')
@UseGuards(ProviderRoutingGuard)
export class VectorStoresController {
  constructor(private readonly resources: ResourceOperations) {}

  @Post()
  @HttpCode(200)
  @Operation('vector_stores.create')
  @ApiOperation({ summary: 'Create a vector store' })
  create(@Ctx() context: RequestContext, @Body() body: VectorStoreCreateDto, @Res() res: Response) {
    return this.run(context, res, { method: 'POST', path: '', query: '', body });
  }

  @Get()
  @Operation('vector_stores.list')
  @ApiOperation({ summary: 'List vector stores' })
  list(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: '', query: rawQuery(req) });
  }

  @Get(':id')
  @Operation('vector_stores.retrieve')
  @ApiOperation({ summary: 'Retrieve a vector store' })
  retrieve(@Ctx() context: RequestContext, @Param('id') store: string, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: id(store), query: '' });
  }

  @Post(':id')
  @HttpCode(200)
  @Operation('vector_stores.update')
  @ApiOperation({ summary: 'Modify a vector store (name, expires_after, metadata)' })
  update(@Ctx() context: RequestContext, @Param('id') store: string, @Body() body: VectorStoreCreateDto, @Res() res: Response) {
    return this.run(context, res, { method: 'POST', path: id(store), query: '', body });
  }

  @Delete(':id')
  @Operation('vector_stores.delete')
  @ApiOperation({ summary: 'Delete a vector store' })
  delete(@Ctx() context: RequestContext, @Param('id') store: string, @Res() res: Response) {
    return this.run(context, res, { method: 'DELETE', path: id(store), query: '' });
  }

  @Post(':id/search')
  @HttpCode(200)
  @Operation('vector_stores.search')
  @ApiOperation({ summary: 'Search a vector store' })
  search(@Ctx() context: RequestContext, @Param('id') store: string, @Body() body: VectorStoreSearchDto, @Res() res: Response) {
    return this.run(context, res, { method: 'POST', path: `${id(store)}/search`, query: '', body });
  }

  @Post(':id/files')
  @HttpCode(200)
  @Operation('vector_stores.files.create')
  @ApiOperation({ summary: 'Add an uploaded file to a vector store' })
  addFile(@Ctx() context: RequestContext, @Param('id') store: string, @Body() body: VectorStoreFileCreateDto, @Res() res: Response) {
    return this.run(context, res, { method: 'POST', path: `${id(store)}/files`, query: '', body });
  }

  @Get(':id/files')
  @Operation('vector_stores.files.list')
  @ApiOperation({ summary: 'List the files of a vector store' })
  listFiles(@Ctx() context: RequestContext, @Param('id') store: string, @Req() req: Request, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: `${id(store)}/files`, query: rawQuery(req) });
  }

  @Get(':id/files/:fileId')
  @Operation('vector_stores.files.retrieve')
  @ApiOperation({ summary: 'Retrieve a file of a vector store (its processing status)' })
  retrieveFile(@Ctx() context: RequestContext, @Param('id') store: string, @Param('fileId') file: string, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: `${id(store)}/files${id(file)}`, query: '' });
  }

  @Delete(':id/files/:fileId')
  @Operation('vector_stores.files.delete')
  @ApiOperation({ summary: 'Remove a file from a vector store' })
  deleteFile(@Ctx() context: RequestContext, @Param('id') store: string, @Param('fileId') file: string, @Res() res: Response) {
    return this.run(context, res, { method: 'DELETE', path: `${id(store)}/files${id(file)}`, query: '' });
  }

  @Post(':id/file_batches')
  @HttpCode(200)
  @Operation('vector_stores.file_batches.create')
  @ApiOperation({ summary: 'Add several uploaded files to a vector store' })
  addBatch(@Ctx() context: RequestContext, @Param('id') store: string, @Body() body: VectorStoreFileBatchCreateDto, @Res() res: Response) {
    return this.run(context, res, { method: 'POST', path: `${id(store)}/file_batches`, query: '', body });
  }

  @Get(':id/file_batches/:batchId')
  @Operation('vector_stores.file_batches.retrieve')
  @ApiOperation({ summary: 'Retrieve a file batch of a vector store' })
  retrieveBatch(@Ctx() context: RequestContext, @Param('id') store: string, @Param('batchId') batch: string, @Res() res: Response) {
    return this.run(context, res, { method: 'GET', path: `${id(store)}/file_batches${id(batch)}`, query: '' });
  }

  private async run(context: RequestContext, res: Response, action: ResourceAction): Promise<void> {
    sendGatewayResult(res, context, await this.resources.run(context, VECTOR_STORES, action));
  }
}
