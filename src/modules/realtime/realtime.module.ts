import { Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { RoutingModule } from '../routing/routing.module';
import { RealtimeGateway } from './realtime.gateway';
import { RealtimeHandshake } from './realtime-handshake';

/** The Realtime API over WebSocket: handshake (auth, routing, provider socket), relay, one log row per session. */
@Module({
  imports: [RoutingModule, KeysModule],
  providers: [RealtimeGateway, RealtimeHandshake],
  exports: [RealtimeGateway],
})
export class RealtimeModule {}
