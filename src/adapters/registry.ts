import type { WireAdapter } from './adapter.js';
import { handupAdapter } from './handup.js';
import { askAdapter } from './ask.js';
import { paperclipAdapter } from './paperclip.js';
import { rollAdapter } from './roll.js';
import { alpAdapter } from './alp.js';

/**
 * Every wire format countersign speaks, listed explicitly (one line per format). The contract
 * test fails when an adapter here has no fixtures or a fixture folder has no adapter.
 */
export const adapters: readonly WireAdapter<any, any, any>[] = [
  handupAdapter,
  askAdapter,
  paperclipAdapter,
  rollAdapter,
  alpAdapter,
];

const byFormat = new Map<string, WireAdapter<any, any, any>>();
for (const a of adapters) {
  if (byFormat.has(a.format)) throw new Error(`two adapters claim the format "${a.format}"`);
  byFormat.set(a.format, a);
}

export function getAdapter(format: string): WireAdapter<any, any, any> | undefined {
  return byFormat.get(format);
}

export const FORMAT_NAMES: readonly string[] = adapters.map((a) => a.format);
