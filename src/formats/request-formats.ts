import type { WireAdapter } from '../adapters/adapter.js';
import { adapters as registered } from '../adapters/registry.js';

/**
 * Requests made through the MCP server (`/mcp`). `mcp` is a request format, not a wire format:
 * MCP clients call tools, so there are no frames to normalise and no native reply to render.
 */
export const MCP_FORMAT = 'mcp';

/**
 * Every value a request's `format` can hold with these adapters wired: their wire formats, then
 * the formats of integrations that create requests without frames. The list filters and the
 * policy's `format` matcher accept exactly these.
 */
export function requestFormats(adapters: readonly WireAdapter<any, any, any>[]): readonly string[] {
  return [...adapters.map((a) => a.format), MCP_FORMAT];
}

/** The request formats of the registry (the daemon's, unless it is wired with other adapters). */
export const REQUEST_FORMATS: readonly string[] = requestFormats(registered);
