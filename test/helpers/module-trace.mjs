// `node --import <this file> …` records the URL of every module the process loads, one per
// line, in the file named by MODULE_TRACE_FILE: a test can then say what a command did not load.
import { register } from 'node:module';

register('./module-trace-hooks.mjs', import.meta.url);
