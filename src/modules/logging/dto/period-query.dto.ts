import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { GatewayError } from '../../../common/errors/gateway-error';
import { IsInstant } from '../../../common/pipes/validators';

const DAY_MS = 86_400_000;

/** A period `[from, to)` that defaults to the 30 days before now: the end users' and the batches' lists. */
export class PeriodQueryDto {
  @ApiPropertyOptional({ description: 'ISO 8601 date-time, inclusive; default 30 days before `to`' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 date-time, exclusive; default now' })
  @IsOptional()
  @IsInstant()
  to?: string;
}

/** The period asked for, its defaults filled in; `from` not before `to` is a 400 naming `from`. */
export function periodOf(query: PeriodQueryDto): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : new Date();
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
  if (from >= to) throw GatewayError.invalidRequest('from must be before to', 'from');
  return { from, to };
}
