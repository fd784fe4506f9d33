import type { WireAdapter } from '../adapters/adapter.js';
import { AppError } from '../lib/errors.js';
import { requestFormats } from './request-formats.js';

/** The handup format is served by POST /v1/requests, never by the native-format endpoints. */
export const HANDUP_FORMAT = 'handup';

/**
 * The adapters this daemon serves, by format. The daemon is wired with the registry's list;
 * tests may wire extra adapters without touching the registry.
 */
export function createFormatCatalog(adapters: readonly WireAdapter<any, any, any>[]) {
  const byFormat = new Map<string, WireAdapter<any, any, any>>();
  for (const a of adapters) {
    if (byFormat.has(a.format)) throw new Error(`two adapters claim the format "${a.format}"`);
    byFormat.set(a.format, a);
  }
  const native = adapters.map((a) => a.format).filter((f) => f !== HANDUP_FORMAT);
  const all = requestFormats(adapters);

  return {
    get(format: string): WireAdapter<any, any, any> | undefined {
      return byFormat.get(format);
    },

    /** The adapter behind `/v1/formats/{format}/…`; handup and unknown names are 404 `unknown_format`. */
    native(format: string): WireAdapter<any, any, any> {
      const adapter = format === HANDUP_FORMAT ? undefined : byFormat.get(format);
      if (!adapter) {
        const hint = format === HANDUP_FORMAT ? 'handup requests go to POST /v1/requests' : `use one of ${native.join(', ') || '(none)'}`;
        throw new AppError('unknown_format', `unknown format "${format}": ${hint}`);
      }
      return adapter;
    },

    /** Every native format name (not handup), in registry order. */
    nativeFormats(): readonly string[] {
      return native;
    },

    /** Every value a request's `format` can hold: the wired formats (handup first), then `mcp`. */
    requestFormats(): readonly string[] {
      return all;
    },
  };
}

export type FormatCatalog = ReturnType<typeof createFormatCatalog>;
