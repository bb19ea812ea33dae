import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { Public } from '../../context/request-context.decorator';

export const DASHBOARD_DIR = Symbol('DASHBOARD_DIR');

/** Hashed bundles never change under their name; everything else is revalidated. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

/**
 * The dashboard's single-page app (built by `npm run build` into `dist/dashboard`),
 * served under `/dashboard`: files as they are (hashed assets cached for a year), any
 * other path under it answered with `index.html` so client-side routes load. Public: the
 * app signs in itself (the session cookie of `/auth`), and the data behind it is not public.
 */
@ApiExcludeController()
@Controller('dashboard')
export class DashboardController {
  constructor(@Inject(DASHBOARD_DIR) private readonly root: string) {}

  @Get()
  @Public()
  index(@Req() req: Request, @Res() res: Response): void {
    this.serve('', req, res);
  }

  @Get('*path')
  @Public()
  file(@Req() req: Request, @Res() res: Response): void {
    this.serve(req.path.replace(/^\/dashboard\/?/, ''), req, res);
  }

  private serve(path: string, req: Request, res: Response): void {
    if (!existsSync(join(this.root, 'index.html'))) return notBuilt(req, res);
    let relative: string;
    try {
      relative = normalize(decodeURIComponent(path)).replace(/^([/\\])+/, '');
    } catch {
      relative = '';
    }
    const isFile = relative !== '' && relative !== '.' && !relative.startsWith('..') && !relative.split(sep).some((part) => part.startsWith('.'));
    if (isFile && isRegularFile(join(this.root, relative))) {
      res.setHeader('x-content-type-options', 'nosniff');
      const encoded = precompressed(this.root, relative, req.headers['accept-encoding']);
      res.setHeader('vary', 'accept-encoding');
      if (encoded) {
        // The compressed copy (dashboard/compress.mjs), typed as the file it stands for.
        res.setHeader('content-encoding', encoded.encoding);
        res.type(extname(relative));
      }
      res.sendFile(encoded?.file ?? relative, {
        root: this.root,
        dotfiles: 'deny',
        etag: true,
        lastModified: true,
        cacheControl: false,
        headers: { 'cache-control': relative.startsWith(`assets${sep}`) ? IMMUTABLE : 'public, max-age=300' },
      });
      return;
    }
    // A missing file (a name with an extension) is a 404, not the app: a stale bundle
    // name would otherwise load HTML as a script.
    if (extname(relative) !== '') {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    res.set({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });
    res.sendFile('index.html', { root: this.root, etag: true, lastModified: true, cacheControl: false });
  }
}

/**
 * The compressed copy of a built file the client takes (`npm run build` writes `.br` and
 * `.gz` beside each text file over 1 KiB): Brotli first, then gzip; none for a client that
 * takes neither, or a file without one.
 */
export function precompressed(root: string, relative: string, acceptEncoding: string | string[] | undefined): { file: string; encoding: 'br' | 'gzip' } | null {
  const accepted = String(acceptEncoding ?? '')
    .split(',')
    .map((part) => part.trim().split(';'))
    .filter(([, q]) => !q || !/^q=0(\.0*)?$/.test(q.trim()))
    .map(([name]) => name.toLowerCase());
  for (const [encoding, suffix] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const) {
    if (accepted.includes(encoding) && isRegularFile(join(root, relative + suffix))) return { file: relative + suffix, encoding };
  }
  return null;
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** 503 while the build output is missing: HTML for a browser, the gateway's error shape for anything else. */
function notBuilt(req: Request, res: Response): void {
  const message =
    'The dashboard is not built: run `npm run build` (it builds the gateway and the dashboard into dist/), then restart the gateway or reload this page.';
  res.status(503).setHeader('cache-control', 'no-store');
  if ((req.headers.accept ?? '').includes('text/html')) {
    res
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Dashboard not built</title></head>` +
          `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5"><h1>Dashboard not built</h1>` +
          `<p>The gateway is running, but the dashboard's files are missing.</p><p>Run <code>npm run build</code> (it builds the gateway and the dashboard into <code>dist/</code>), then reload this page.</p></body></html>`,
      );
    return;
  }
  res.json({ error: { message, type: 'service_unavailable', param: null, code: 'dashboard_not_built' } });
}
