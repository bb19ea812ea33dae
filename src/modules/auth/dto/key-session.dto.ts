import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class KeySessionCreateDto {
  @ApiProperty({ description: 'A gateway API key (gk-…); the session acts as this key and ends when it is revoked' })
  @IsString()
  @Length(1, 512)
  key: string;
}
