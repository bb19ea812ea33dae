import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { usageFromOpenAIImages } from '../../providers/openai-usage';
import { PricingService } from '../pricing/pricing.service';
import { JsonOperations } from '../routing/json-operation';
import type { OperationSpec } from '../upstream/upstream-attempt';
import { ImageGenerationCreateDto } from './dto/image-generation-create.dto';

@ApiTags('images')
@ApiSecurity('gateway-api-key')
@Controller('v1/images')
export class ImagesController {
  /** Token usage comes only from GPT Image models; DALL·E answers are priced per image, by size and quality. */
  private readonly spec: OperationSpec;

  constructor(
    private readonly operations: JsonOperations,
    pricing: PricingService,
  ) {
    this.spec = {
      capability: 'imageGenerations',
      title: 'image generations',
      usage: usageFromOpenAIImages,
      cost: (answer, { provider, model, requestBody }) => {
        const count = Array.isArray(answer.data) ? answer.data.length : 0;
        const request = (requestBody ?? {}) as Record<string, unknown>;
        return count && model ? pricing.imageCost(provider, model, { count, size: request.size, quality: request.quality }) : null;
      },
    };
  }

  @Post('generations')
  @HttpCode(200)
  @Operation('images.generations')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: 'Generate images from a prompt (OpenAI format)' })
  async generate(@Ctx() context: RequestContext, @Body() body: ImageGenerationCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.operations.run(context, body, this.spec));
  }
}
