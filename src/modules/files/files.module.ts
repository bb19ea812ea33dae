import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { VectorStoresController } from './vector-stores.controller';

/** Uploaded files and the vector stores built from them, at the provider the routing headers name. */
@Module({
  imports: [RoutingModule],
  controllers: [VectorStoresController],
})
export class FilesModule {}
