import { Body, Controller, Get, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthConfigResponseDto, SessionResponseDto } from './dto/session.response';
import type { Request, Response } from 'express';
import { GatewayError } from '../../common/errors/gateway-error';
import { Public } from '../../context/request-context.decorator';
import { AuthPageFilter } from './auth-page.filter';
import { AuthService, SIGN_IN_TTL_SECONDS, StartedSession } from './auth.service';
import { clearCookie, cookieOf, SESSION_COOKIE, setCookie, SIGN_IN_COOKIE, SIGN_IN_COOKIE_PATH } from './cookies';
import { KeySessionCreateDto } from './dto/key-session.dto';

/** https as the client sees it: directly, or as a proxy in front says (it only decides the Secure flag and the default redirect URI). */
function isHttps(req: Request): boolean {
  const forwarded = req.headers['x-forwarded-proto'];
  return req.secure || (typeof forwarded === 'string' && forwarded.split(',')[0].trim() === 'https');
}

const baseOf = (req: Request) => `${isHttps(req) ? 'https' : 'http'}://${req.headers.host}`;

function sessionCookie(res: Response, req: Request, session: StartedSession): void {
  res.append('set-cookie', setCookie(SESSION_COOKIE, session.cookie, { path: '/', maxAgeSeconds: session.maxAgeSeconds, secure: isHttps(req) }));
}

/**
 * Dashboard sign-in (CONTRACT section 13): OpenID Connect and API-key sign-in, both ending
 * in the same HttpOnly session cookie. Public routes: each reads the cookie itself.
 */
@ApiTags('auth')
@Controller('auth')
@Public()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Get('config')
  @ApiOkResponse({ type: AuthConfigResponseDto })
  @ApiOperation({ summary: 'How the dashboard may sign in: single sign-on when configured, API keys always' })
  config() {
    return { sso: this.auth.ssoEnabled, login_url: this.auth.ssoEnabled ? '/auth/login' : null, key_sign_in: true };
  }

  @Get('login')
  @UseFilters(AuthPageFilter)
  @ApiOperation({ summary: 'Starts single sign-on: redirects to the identity provider (authorization code, PKCE S256)' })
  async login(@Req() req: Request, @Res() res: Response): Promise<void> {
    const { location, signInCookie } = await this.auth.startSignIn(baseOf(req));
    res.append('set-cookie', setCookie(SIGN_IN_COOKIE, signInCookie, { path: SIGN_IN_COOKIE_PATH, maxAgeSeconds: SIGN_IN_TTL_SECONDS, secure: isHttps(req) }));
    res.setHeader('cache-control', 'no-store');
    res.redirect(302, location);
  }

  @Get('callback')
  @UseFilters(AuthPageFilter)
  @ApiOperation({ summary: "The identity provider's redirect back: checks it, starts a session, redirects to the dashboard" })
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    // The sign-in cookie is used once, whatever the outcome.
    res.append('set-cookie', clearCookie(SIGN_IN_COOKIE, SIGN_IN_COOKIE_PATH, isHttps(req)));
    const session = await this.auth.finishSignIn(search, cookieOf(req.headers.cookie, SIGN_IN_COOKIE));
    sessionCookie(res, req, session);
    res.setHeader('cache-control', 'no-store');
    res.redirect(302, '/dashboard');
  }

  @Get('session')
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiOperation({ summary: 'Who is signed in: user or API key, workspaces and roles, and the CSRF token for writes' })
  async session(@Req() req: Request) {
    const view = await this.auth.view(cookieOf(req.headers.cookie, SESSION_COOKIE));
    if (!view) throw new GatewayError(401, 'authentication_error', 'Not signed in: no dashboard session, or it expired or was signed out', 'invalid_session');
    return view;
  }

  @Post('key-session')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiOperation({ summary: 'API-key sign-in: a live gateway key exchanged for a session cookie (set-ups without an identity provider)' })
  async keySession(@Req() req: Request, @Res({ passthrough: true }) res: Response, @Body() dto: KeySessionCreateDto) {
    const session = await this.auth.keySession(dto.key);
    sessionCookie(res, req, session);
    return session.view;
  }

  @Post('logout')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ends the session on the server (every instance) and clears its cookie; needs x-csrf-token' })
  async logout(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const csrf = req.headers['x-csrf-token'];
    await this.auth.signOut(req.headers.cookie, typeof csrf === 'string' ? csrf : undefined);
    res.append('set-cookie', clearCookie(SESSION_COOKIE, '/', isHttps(req)));
    return { signed_out: true };
  }
}
