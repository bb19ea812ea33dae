import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../common/context/request-context';
import { Ctx, Operation } from '../../common/context/request-context.decorator';
import { ProviderRoutingGuard } from '../../common/guards/provider-routing.guard';
import { sendGatewayResult } from '../../common/http/gateway-result';
import { ImageGenerationCreateDto } from './dto/image-generation-create.dto';
import { ImagesService } from './images.service';

@ApiTags('images')
@ApiSecurity('gateway-api-key')
@Controller('v1/images')
export class ImagesController {
  constructor(private readonly images: ImagesService) {}

  @Post('generations')
  @HttpCode(200)
  @Operation('images.generations')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: 'Generate images from a prompt (OpenAI format)' })
  async generate(@Ctx() context: RequestContext, @Body() body: ImageGenerationCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.images.generate(context, body));
  }
}
