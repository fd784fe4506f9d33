import { FORMAT_NAMES } from '../adapters/registry.js';

/**
 * Requests made through the MCP server (`/mcp`). `mcp` is a request format, not a wire format:
 * MCP clients call tools, so there are no frames to normalise and no native reply to render.
 */
export const MCP_FORMAT = 'mcp';

/**
 * Every value a request's `format` can hold: the wire formats of the registry, then the formats
 * of integrations that create requests without frames. The list filters and policy matchers
 * accept exactly these.
 */
export const REQUEST_FORMATS: readonly string[] = [...FORMAT_NAMES, MCP_FORMAT];
