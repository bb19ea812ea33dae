/** A workspace as the admin API answers it (WorkspacesService.toResponse), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';
import { RateLimitDto } from '../../keys/dto/key-limits.dto';
import { BudgetStatusResponseDto } from '../../keys/dto/key-spend.response';

export class WorkspaceResponseDto extends BudgetStatusResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['workspace'] })
  object: 'workspace';

  @ApiProperty()
  name: string;

  @ApiProperty({ example: 'default', description: 'What keys name it by, and the `x-gateway-workspace` header' })
  slug: string;

  @ApiProperty({ type: [RateLimitDto], description: "Held across all the workspace's keys" })
  rate_limits: RateLimitDto[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
