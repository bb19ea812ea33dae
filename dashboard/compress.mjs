// Writes a Brotli (.br) and a gzip (.gz) copy beside each text file of the built dashboard
// (dist/dashboard), once at build time, so the gateway serves them compressed without
// compressing on every request (src/modules/dashboard/dashboard.controller.ts picks one by
// the client's Accept-Encoding). Run by `npm run build` after Vite.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = new URL('../dist/dashboard/', import.meta.url).pathname;
const TEXT = /\.(js|css|html|svg|json|map|txt)$/;
/** Smaller files gain nothing worth a second request path. */
const MIN_BYTES = 1024;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (TEXT.test(name)) yield path;
  }
}

for (const path of files(ROOT)) {
  const bytes = readFileSync(path);
  if (bytes.length < MIN_BYTES) continue;
  writeFileSync(`${path}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
}
