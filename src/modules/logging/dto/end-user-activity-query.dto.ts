import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { ListQueryDto } from '../../../common/http/list.dto';
import { IsIn, IsOptional, IsString, IsUUID, Length, Matches } from 'class-validator';
import { PeriodQueryDto } from './period-query.dto';
import { MAX_TEXT_CHARS } from '../storable-record';

export const END_USER_ORDERS = ['cost', 'requests', 'user'] as const;
export type EndUserOrder = (typeof END_USER_ORDERS)[number];

/** The period and the API key that `GET /v1/analytics/users` and `/users/{user}` share. */
export class EndUserActivityRangeDto extends PeriodQueryDto {
  @ApiPropertyOptional({ description: "Only this API key's requests (then end users with a budget and no requests are left out)" })
  @IsOptional()
  @IsUUID()
  api_key_id?: string;
}

/**
 * `GET /v1/analytics/users`: the end users (the `user` of requests) who made requests in the
 * period, and those with a budget; `cursor` is the `next_cursor` of the previous page.
 */
export class EndUserActivityQueryDto extends IntersectionType(EndUserActivityRangeDto, ListQueryDto) {
  // The list is one aggregate: its cursor is an offset.
  @Matches(/^\d{1,7}$/, { message: 'cursor must be the next_cursor of a previous page' })
  declare cursor?: string;

  @ApiPropertyOptional({ description: 'The beginning of the user (case-insensitive)' })
  @IsOptional()
  @IsString()
  @Length(1, MAX_TEXT_CHARS)
  q?: string;

  @ApiPropertyOptional({
    enum: END_USER_ORDERS,
    default: 'cost',
    description: '`cost`: by spend (unknown as 0), then requests; `requests`: by requests, then spend; `user`: by name',
  })
  @IsOptional()
  @IsIn(END_USER_ORDERS, { message: `order must be one of ${END_USER_ORDERS.join(', ')}` })
  order?: EndUserOrder;
}

/** `GET /v1/analytics/users/{user}`: the end user as the request's `user` named them. */
export class EndUserParamDto {
  @ApiProperty({ description: 'The end user (the `user` of requests)' })
  @IsString()
  @Length(1, MAX_TEXT_CHARS)
  user: string;
}
