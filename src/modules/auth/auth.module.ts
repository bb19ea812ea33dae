import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { SessionEntity } from './entities/session.entity';
import { UserEntity } from './entities/user.entity';
import { SessionService } from './session.service';

/** Dashboard sign-in: OpenID Connect and API-key sessions; SessionService is what the key guard asks about a session cookie. */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, SessionEntity]), KeysModule],
  controllers: [AuthController],
  providers: [AuthService, SessionService],
  exports: [SessionService],
})
export class AuthModule {}
