import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysService } from './api-keys.service';
import { BootstrapAdminService } from './bootstrap-admin.service';
import { ConfigsService } from './configs.service';
import { EndUsersService } from './end-users.service';
import { ApiKeyEntity } from './entities/api-key.entity';
import { EndUserEntity } from './entities/end-user.entity';
import { StoredConfigEntity } from './entities/stored-config.entity';
import { VirtualKeyEntity } from './entities/virtual-key.entity';
import { KeyChangeNotifier } from './key-change-notifier';
import { KeyLookupService } from './key-lookup.service';
import { ApiKeysController, ConfigsController, EndUsersController, VirtualKeysController } from './keys.controller';
import { SpendService } from './spend.service';
import { VirtualKeysService } from './virtual-keys.service';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { WorkspaceEntity } from '../workspaces/workspace.entity';
import { WorkspacesController } from '../workspaces/workspaces.controller';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** Keys and what owns them: workspaces live here too, since every key belongs to one and the guard needs both. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity, VirtualKeyEntity, StoredConfigEntity, EndUserEntity, WorkspaceEntity])],
  controllers: [WorkspacesController, ApiKeysController, VirtualKeysController, ConfigsController, EndUsersController],
  providers: [
    KeyLookupService,
    KeyChangeNotifier,
    ApiKeysService,
    VirtualKeysService,
    ConfigsService,
    EndUsersService,
    SpendService,
    BootstrapAdminService,
    WorkspacesService,
    WorkspaceDirectory,
  ],
  exports: [KeyLookupService, KeyChangeNotifier, WorkspaceDirectory],
})
export class KeysModule {}
