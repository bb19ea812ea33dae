import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { toInt } from '../query-transforms';

/** `limit` and `cursor` of every list endpoint (CONTRACT section 4). */
export class ListQueryDto {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 500 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(500)
  limit = 50;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

export function listPage<T>(rows: T[], limit: number, cursorOf: (row: T) => string): ListPage<T> {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { object: 'list', data, next_cursor: more ? cursorOf(data[data.length - 1]) : null };
}
