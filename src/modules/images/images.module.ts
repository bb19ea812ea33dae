import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { ImagesController } from './images.controller';
import { ImagesService } from './images.service';

@Module({
  imports: [RoutingModule, UpstreamModule],
  controllers: [ImagesController],
  providers: [ImagesService],
})
export class ImagesModule {}
