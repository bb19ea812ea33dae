import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
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

const listResponses = new Map<Type, Type>();

/**
 * The OpenAPI schema of a list page of `item`s, for `@ApiOkResponse({ type })`: a class per
 * item type (`LogRowResponseDto` gives `LogRowListResponseDto`), made once, since a generic
 * class is one schema for OpenAPI. Documentation only: the services return `ListPage`s.
 */
export function ListResponseDto<T>(item: Type<T>): Type<ListPage<T>> {
  const made = listResponses.get(item);
  if (made) return made as Type<ListPage<T>>;
  class ListResponse implements ListPage<T> {
    @ApiProperty({ enum: ['list'] })
    object: 'list';

    @ApiProperty({ type: () => item, isArray: true })
    data: T[];

    @ApiProperty({ type: String, nullable: true, description: 'The cursor of the next page; null on the last' })
    next_cursor: string | null;
  }
  Object.defineProperty(ListResponse, 'name', { value: `${item.name.replace(/(Response)?Dto$/, '')}ListResponseDto` });
  listResponses.set(item, ListResponse);
  return ListResponse;
}
