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
import { KeyChangeNotifier } from './key-change-notifier.service';
import { KeyLookupService } from './key-lookup.service';
import { ApiKeysController, ConfigsController, EndUsersController, VirtualKeysController } from './keys.controller';
import { SpendService } from './spend.service';
import { VirtualKeysService } from './virtual-keys.service';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity, VirtualKeyEntity, StoredConfigEntity, EndUserEntity])],
  controllers: [ApiKeysController, VirtualKeysController, ConfigsController, EndUsersController],
  providers: [KeyLookupService, KeyChangeNotifier, ApiKeysService, VirtualKeysService, ConfigsService, EndUsersService, SpendService, BootstrapAdminService],
  exports: [KeyLookupService, KeyChangeNotifier],
})
export class KeysModule {}
