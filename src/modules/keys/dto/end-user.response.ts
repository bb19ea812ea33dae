/** An end user's budget record as the admin API answers it (EndUsersService.toResponse), for the OpenAPI document. */
import { ApiProperty } from '@nestjs/swagger';
import { BudgetStatusResponseDto } from './key-spend.response';

export class EndUserResponseDto extends BudgetStatusResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['end_user'] })
  object: 'end_user';

  @ApiProperty({ example: 'alice@example.com', description: 'The `user` value requests carry; unique in its workspace' })
  user: string;

  @ApiProperty({ type: String, nullable: true, description: "The workspace's slug" })
  workspace: string | null;

  @ApiProperty({ format: 'uuid' })
  workspace_id: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  metadata: Record<string, string>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
