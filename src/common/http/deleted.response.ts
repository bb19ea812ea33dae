import { ApiProperty } from '@nestjs/swagger';

/** The answer of an admin object's DELETE (`{id, object, deleted: true}`), for the OpenAPI document. */
export class DeletedResponseDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ example: 'api_key', description: 'The kind of object deleted' })
  object: string;

  @ApiProperty({ enum: [true] })
  deleted: true;
}
