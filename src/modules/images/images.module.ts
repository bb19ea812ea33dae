import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { ImagesController } from './images.controller';

@Module({
  imports: [RoutingModule],
  controllers: [ImagesController],
})
export class ImagesModule {}
