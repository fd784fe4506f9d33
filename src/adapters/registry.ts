import type { WireAdapter } from './adapter.js';
import { handupAdapter } from './handup.js';
import { askAdapter } from './ask.js';
import { paperclipAdapter } from './paperclip/index.js';
import { rollAdapter } from './roll/index.js';
import { alpAdapter } from './alp.js';
import { claudeCodeAdapter } from './claude-code.js';

/**
 * Every wire format countersign speaks, listed explicitly (one line per format). The contract
 * test fails when an adapter here has no fixtures or a fixture folder has no adapter. Lookup by
 * name (and the check that no two adapters claim one) is the format catalog's
 * (src/formats/format-catalog.ts).
 */
export const adapters: readonly WireAdapter<any, any, any>[] = [handupAdapter, askAdapter, paperclipAdapter, rollAdapter, alpAdapter, claudeCodeAdapter];

export const FORMAT_NAMES: readonly string[] = adapters.map((a) => a.format);
