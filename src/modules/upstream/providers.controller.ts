import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { operationsOf } from '../../providers/provider-operations';
import { ProviderRegistry } from '../../providers/registry';
import { Permission } from '../../context/request-context.decorator';

export interface ProviderListResponse {
  object: 'list';
  data: { id: string; operations: string[] }[];
}

/**
 * `GET /v1/providers` (CONTRACT section 9): every provider id the gateway routes to and the
 * operations each serves itself, read from the registry. Any gateway key may ask; it reaches
 * no provider, so it has no `@Operation` and writes no log row (like the admin API).
 */
@ApiTags('providers')
@ApiSecurity('gateway-api-key')
@Permission('models.call')
@Controller('v1/providers')
export class ProvidersController {
  /** The registry is fixed at start-up: the list is built once. */
  private readonly list: ProviderListResponse;

  constructor(registry: ProviderRegistry) {
    const ids = [...registry.ids()].sort();
    this.list = { object: 'list', data: ids.map((id) => ({ id, operations: operationsOf(registry.get(id)) })) };
  }

  @Get()
  @ApiOperation({
    summary: 'The providers the gateway routes to, by id, and the operations each serves itself',
    description:
      'Sorted by id. Operation names are those of the log (`chat.completions`, `embeddings`, `images.generations`, `audio.speech`, `responses`, `messages`, `messages.count_tokens`, `realtime` …); ' +
      'REST resources by their prefix (`models`, `files`, `fine_tuning.jobs`, `vector_stores`). `/v1/responses` and `/v1/messages` also reach every provider with `chat.completions` through the chat bridge.',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        object: { type: 'string', enum: ['list'] },
        data: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string', example: 'groq' },
              operations: { type: 'array', items: { type: 'string' }, example: ['chat.completions', 'responses', 'models'] },
            },
          },
        },
      },
    },
  })
  providers(): ProviderListResponse {
    return this.list;
  }
}
