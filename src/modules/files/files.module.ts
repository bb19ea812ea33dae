import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { FilesController } from './files.controller';
import { VectorStoresController } from './vector-stores.controller';

/** Uploaded files and the vector stores built from them, at the provider the routing headers name. */
@Module({
  imports: [RoutingModule],
  controllers: [FilesController, VectorStoresController],
})
export class FilesModule {}
