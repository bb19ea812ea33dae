import { Module } from '@nestjs/common';
import { ProviderRoutingGuard } from '../../common/guards/provider-routing.guard';
import { KeysModule } from '../keys/keys.module';
import { RouteResolver } from './route-resolver.service';

@Module({
  imports: [KeysModule],
  providers: [RouteResolver, ProviderRoutingGuard],
  exports: [RouteResolver, ProviderRoutingGuard],
})
export class RoutingModule {}
