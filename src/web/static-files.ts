import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the page, read once at start-up. */
export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PUBLIC_DIR = join(packageRoot, 'public');

/**
 * The browser builds of the markdown libraries, served from node_modules so they stay the
 * versions package-lock pins. Resolved through Node so a hoisted install works too.
 */
function vendorFiles(): Record<string, string> {
  const require = createRequire(import.meta.url);
  return {
    'vendor/marked.js': join(dirname(require.resolve('marked')), 'marked.esm.js'),
    'vendor/purify.js': join(dirname(require.resolve('dompurify')), 'purify.es.mjs'),
  };
}

function entry(path: string): StaticFile | undefined {
  const type = TYPES[extname(path)];
  if (!type) return undefined;
  let body = readFileSync(path);
  // The vendor builds end with a source-map comment pointing at files we do not serve.
  if (path.includes(`${sep}node_modules${sep}`)) body = Buffer.from(body.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Every servable file keyed by its path under `/ui/` (e.g. `js/main.js`). Built from a
 * directory listing at start-up, so a request path can only ever name a file that is in the
 * map: there is no path from a URL to the file system, hence no traversal to guard against.
 */
export function loadStaticFiles(dir = PUBLIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  let names: string[] = [];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch (err) {
    // An install without the page still serves the API; `/` then says what is missing.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const name of names) {
    const full = join(dir, name);
    const file = entry(full);
    if (file) files.set(relative(dir, full).split(sep).join('/'), file);
  }
  for (const [key, path] of Object.entries(vendorFiles())) {
    const file = entry(path);
    if (file) files.set(key, file);
  }
  return files;
}
