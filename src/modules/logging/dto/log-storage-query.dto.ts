import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** `GET /v1/logs/storage`: how many days back, today included. */
export class LogStorageQueryDto {
  @ApiPropertyOptional({ description: 'Days back, today included (UTC days)', default: 30, minimum: 1, maximum: 366 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(366)
  days = 30;
}
