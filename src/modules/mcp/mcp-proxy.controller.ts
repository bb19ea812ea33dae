import { All, Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Permission } from '../../context/request-context.decorator';
import { McpProxy } from './mcp-proxy';

/**
 * MCP Streamable HTTP for MCP clients, with a gateway key (`x-gateway-api-key` or
 * `Authorization: Bearer gk-…`). No `@Operation`: the HTTP exchanges themselves are not
 * logged, each tool call is (operation `mcp.tools.call`).
 */
@ApiTags('mcp')
@ApiSecurity('gateway-api-key')
@Permission('models.call')
@Controller('v1/mcp')
export class McpProxyController {
  constructor(private readonly proxy: McpProxy) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'MCP endpoint aggregating every server the key may use (tools named {slug}__{tool})' })
  async aggregate(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.proxy.handle(context, req, res, null);
  }

  @Post(':slug')
  @HttpCode(200)
  @ApiOperation({ summary: 'MCP endpoint of one registered MCP server' })
  async one(@Ctx() context: RequestContext, @Param('slug') slug: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.proxy.handle(context, req, res, slug);
  }

  /** Stateless: no server-initiated stream (GET) and no session to end (DELETE), as the MCP spec allows. */
  @All(['', ':slug'])
  otherMethods(@Res() res: Response): void {
    res
      .status(405)
      .setHeader('allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless and takes POST only' }, id: null });
  }
}
