import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { PriceEntryResponseDto, PriceListResponseDto } from './dto/price-entry.response';
import { Permission } from '../../context/request-context.decorator';
import { Audited } from '../audit/audited.decorator';
import { overrideOf, priceIdOf } from './price-audit';
import { PriceQueryDto, PriceUpsertDto } from './dto/price.dto';
import { PriceOverridesService } from './price-overrides.service';

@ApiTags('admin: prices')
@ApiSecurity('gateway-api-key')
@Permission('organisation.manage')
@Audited<PricesController>({ resource: 'price', upsert: true, read: overrideOf, idOf: priceIdOf, workspaceOf: () => null })
@Controller('v1/prices')
export class PricesController {
  constructor(private readonly overrides: PriceOverridesService) {}

  @Post()
  @ApiCreatedResponse({ type: PriceEntryResponseDto })
  @ApiOperation({ summary: 'Set (or replace) the price of a provider’s model; it wins over the catalog on every instance' })
  upsert(@Body() dto: PriceUpsertDto) {
    return this.overrides.upsert(dto);
  }

  @Get()
  @Permission('resources.read')
  @ApiOkResponse({ type: PriceListResponseDto })
  @ApiOperation({
    summary:
      'Prices of every routed provider’s models (catalog, local table, overrides, each with its source), paged, filterable by provider and model; names the catalog and its version',
  })
  list(@Query() query: PriceQueryDto) {
    return this.overrides.list(query);
  }

  // `*model`: model ids may hold slashes (openai/gpt-4o on OpenRouter, meta-llama/… on Groq).
  @Delete(':provider/*model')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove an override; the catalog’s price applies again' })
  remove(@Param('provider') provider: string, @Param('model') model: string | string[]) {
    return this.overrides.remove(provider, Array.isArray(model) ? model.join('/') : model);
  }
}
