import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { sendGatewayResult } from '../routing/gateway-result';
import { CountTokensDto, EmbedContentDto, GenerateContentDto } from './dto/gemini-bodies.dto';
import { GeminiResourcesService } from './gemini-resources.service';
import { GeminiRoutingGuard, pathModel } from './gemini-routing.guard';
import { GeminiService } from './gemini.service';
import { asJsonArray } from './json-array-stream';

/**
 * The body the gateway routes and logs: the client's Gemini body with the path's model and,
 * for `:streamGenerateContent`, `stream: true` (the native attempt takes both out again).
 */
function gatewayBody(model: unknown, body: object, stream = false): Record<string, unknown> {
  return { ...body, model: pathModel(model), ...(stream ? { stream: true } : {}) };
}

/**
 * Google's Gemini API under the gateway's base address (CONTRACT section 16), as the Gemini
 * CLI and `@google/genai` call it. `{model}` may be routed (`@slug/model`); the key comes as
 * `x-goog-api-key`, `?key=` or the gateway's own headers. Errors here are Google's shape.
 */
@ApiTags('gemini')
@ApiSecurity('gateway-api-key')
@Controller('v1beta/models')
@UseGuards(GeminiRoutingGuard)
export class GeminiController {
  constructor(
    private readonly gemini: GeminiService,
    private readonly resources: GeminiResourcesService,
  ) {}

  @Post('*model\\:generateContent')
  @HttpCode(200)
  @Operation('gemini.generate_content')
  @ApiOperation({ summary: "Generate content (Gemini's API) with any provider" })
  async generate(@Ctx() context: RequestContext, @Param('model') model: unknown, @Body() body: GenerateContentDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.gemini.generate(context, gatewayBody(model, body)));
  }

  @Post('*model\\:streamGenerateContent')
  @HttpCode(200)
  @Operation('gemini.generate_content')
  @ApiOperation({ summary: 'Stream generated content: SSE with ?alt=sse, else one JSON array written as it comes' })
  async stream(
    @Ctx() context: RequestContext,
    @Param('model') model: unknown,
    @Query('alt') alt: unknown,
    @Body() body: GenerateContentDto,
    @Res() res: Response,
  ): Promise<void> {
    const result = await this.gemini.generate(context, gatewayBody(model, body, true));
    sendGatewayResult(res, context, alt === 'sse' ? result : asJsonArray(result));
  }

  @Post('*model\\:countTokens')
  @HttpCode(200)
  @Operation('gemini.count_tokens')
  @ApiOperation({ summary: 'Count input tokens: by Gemini natively, else estimated' })
  async countTokens(@Ctx() context: RequestContext, @Param('model') model: unknown, @Body() body: CountTokensDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.countTokens(context, gatewayBody(model, body)));
  }

  @Post('*model\\:embedContent')
  @HttpCode(200)
  @Operation('gemini.embed_content')
  @ApiOperation({ summary: 'Embed one content: by Gemini natively, else through the provider’s OpenAI embeddings' })
  async embed(@Ctx() context: RequestContext, @Param('model') model: unknown, @Body() body: EmbedContentDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.embed(context, gatewayBody(model, body)));
  }

  @Post('*model\\:batchEmbedContents')
  @HttpCode(200)
  @Operation('gemini.embed_content')
  @ApiOperation({ summary: 'Embed several contents' })
  async batchEmbed(@Ctx() context: RequestContext, @Param('model') model: unknown, @Body() body: EmbedContentDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.embed(context, gatewayBody(model, body)));
  }

  @Get()
  @Operation('gemini.models')
  @ApiOperation({ summary: "The provider's models in Gemini's shape (pageSize, pageToken passed to Gemini)" })
  async list(
    @Ctx() context: RequestContext,
    @Query('pageSize') pageSize: unknown,
    @Query('pageToken') pageToken: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const query = new URLSearchParams();
    if (typeof pageSize === 'string') query.set('pageSize', pageSize);
    if (typeof pageToken === 'string') query.set('pageToken', pageToken);
    sendGatewayResult(res, context, await this.resources.models(context, query.toString()));
  }

  @Get('*model')
  @Operation('gemini.models')
  @ApiOperation({ summary: 'One model in Gemini’s shape' })
  async retrieve(@Ctx() context: RequestContext, @Param('model') model: unknown, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.resources.models(context, '', context.model ?? pathModel(model)));
  }
}
