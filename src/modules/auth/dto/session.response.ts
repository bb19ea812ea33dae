/** `/auth/session` and `/auth/config` as the OpenAPI document describes them (AuthService.view, AuthController.config). */
import { ApiProperty } from '@nestjs/swagger';

export class SessionUserResponseDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ type: String, nullable: true })
  email: string | null;

  @ApiProperty({ type: String, nullable: true })
  name: string | null;
}

export class SessionApiKeyResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;
}

export class SessionWorkspaceResponseDto {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null for a membership whose workspace is gone' })
  id: string | null;

  @ApiProperty()
  slug: string;

  @ApiProperty({ example: 'admin' })
  role: string;
}

export class SessionResponseDto {
  @ApiProperty({ enum: ['person', 'api_key'], description: 'Signed in as a person (single sign-on) or with an API key' })
  kind: 'person' | 'api_key';

  @ApiProperty({ type: SessionUserResponseDto, nullable: true })
  user: SessionUserResponseDto | null;

  @ApiProperty({ type: SessionApiKeyResponseDto, nullable: true })
  api_key: SessionApiKeyResponseDto | null;

  @ApiProperty({ type: String, nullable: true, description: 'The role in the acting workspace' })
  role: string | null;

  @ApiProperty({ type: [SessionWorkspaceResponseDto] })
  workspaces: SessionWorkspaceResponseDto[];

  @ApiProperty({ description: 'Sent back as x-csrf-token on every write' })
  csrf_token: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

export class AuthConfigResponseDto {
  @ApiProperty({ description: 'Single sign-on is configured' })
  sso: boolean;

  @ApiProperty({ type: String, nullable: true })
  login_url: string | null;

  @ApiProperty({ description: 'API keys may always sign in' })
  key_sign_in: boolean;
}
