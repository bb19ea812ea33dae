import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { BatchesModule } from '../batches/batches.module';
import { FilesController } from './files.controller';
import { VectorStoresController } from './vector-stores.controller';

/** Uploaded files and the vector stores built from them, at the provider the routing headers name; batch files, kept by the gateway (BatchesModule). */
@Module({
  imports: [RoutingModule, BatchesModule],
  controllers: [FilesController, VectorStoresController],
})
export class FilesModule {}
