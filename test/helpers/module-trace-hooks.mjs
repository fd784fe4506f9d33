import { appendFileSync } from 'node:fs';

// Module hooks run on their own thread; a synchronous append keeps every line.
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.MODULE_TRACE_FILE) appendFileSync(process.env.MODULE_TRACE_FILE, `${resolved.url}\n`);
  return resolved;
}
