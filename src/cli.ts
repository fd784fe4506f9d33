#!/usr/bin/env node
import { runCli } from './cli/run-cli.js';

// The only entry point: argv, env and process.exit are touched here and in src/cli/ alone.
process.exitCode = await runCli(process.argv.slice(2));
