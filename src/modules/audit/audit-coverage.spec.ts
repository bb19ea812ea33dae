import { Controller, Delete, Get, Patch, Post } from '@nestjs/common';
import { Permission } from '../../context/request-context.decorator';
import { ApiKeysController, ConfigsController, EndUsersController, VirtualKeysController } from '../keys/keys.controller';
import { McpServersController } from '../mcp/mcp-servers.controller';
import { PricesController } from '../pricing/prices.controller';
import { PromptsController } from '../prompts/prompts.controller';
import { WorkspacesController } from '../workspaces/workspaces.controller';
import { AuditLogController } from './audit-log.controller';
import { Audited } from './audited.decorator';
import { unauditedRoutes } from './audit-coverage';

@Permission('resources.write')
@Controller('v1/things')
class ForgetfulController {
  @Post() create() {}
  @Get() @Permission('resources.read') list() {}
  @Patch(':id') update() {}
  @Post(':id/render') @Permission('resources.read') render() {}
}

@Permission('organisation.manage')
@Controller('v1/org-things')
class OneForgottenController {
  @Post() @Audited({ resource: 'price', read: () => null }) create() {}
  @Delete(':id') remove() {}
}

describe('audit coverage', () => {
  it('names every change route (resources.write, organisation.manage) without @Audited(), and no read', () => {
    expect(unauditedRoutes([ForgetfulController, OneForgottenController])).toEqual([
      'ForgetfulController.create',
      'ForgetfulController.update',
      'OneForgottenController.remove',
    ]);
  });

  it('finds none in the gateway’s admin controllers', () => {
    const controllers = [
      ApiKeysController,
      VirtualKeysController,
      ConfigsController,
      EndUsersController,
      PromptsController,
      McpServersController,
      WorkspacesController,
      PricesController,
      AuditLogController,
    ];
    expect(unauditedRoutes(controllers)).toEqual([]);
  });
});
