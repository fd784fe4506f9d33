import { commandLine } from './command-line.js';

/**
 * What "Don't ask again" remembers of a request, as the daemon does it (src/policy/scope-rule.ts,
 * held equal by test/unit/scope-action.test.ts): the commands it shows, else its tool, else its
 * title. Null where the daemon refuses to remember it: a title a wire adapter made (a first line,
 * a stock phrase) on a request that shows more than that title.
 */
export function rememberedAction(record, format) {
  const previews = record.previews ?? [];
  const commands = [];
  for (const p of previews) {
    if (p.type !== 'command') continue;
    const line = commandLine(p).trim();
    if (line && !commands.includes(line)) commands.push(line);
  }
  if (commands.length > 0) return { commands: commands.map(commandScope) };
  const input = record.input ?? {};
  const tool = [record.tool, input.tool, input.tool_name].find((v) => typeof v === 'string' && v);
  if (tool) return { tool };
  const beyondTitle = Boolean(record.summary) || previews.length > 0;
  if (format && format !== 'handup' && format !== 'mcp' && beyondTitle) return null;
  return { title: record.title };
}

const PLAIN_WORD = /^[A-Za-z0-9_./=:@%+,-]+$/u;
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** Programs whose arguments are another command or a script: remembered exactly, never by name. */
export const RUNNERS = new Set([
  'env',
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'timeout',
  'nice',
  'renice',
  'nohup',
  'time',
  'command',
  'exec',
  'builtin',
  'eval',
  'source',
  '.',
  'xargs',
  'parallel',
  'stdbuf',
  'ionice',
  'chrt',
  'taskset',
  'setsid',
  'unbuffer',
  'watch',
  'strace',
  'ltrace',
  'chroot',
  'flock',
  'script',
  'busybox',
  'ssh',
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'fish',
  'csh',
  'tcsh',
  'pwsh',
  'powershell',
  'cmd',
  'node',
  'nodejs',
  'deno',
  'bun',
  'ruby',
  'perl',
  'php',
  'lua',
  'luajit',
  'tclsh',
  'osascript',
  'rscript',
  'julia',
  'java',
  'dotnet',
  'wine',
]);

function runsAnother(program) {
  const name = program
    .replace(/^.*[/\\]/, '')
    .toLowerCase()
    .replace(/\.exe$/, '');
  return RUNNERS.has(name) || /^(python|pypy|perl|ruby|php|node|lua)[0-9.]*$/.test(name);
}

/** `{type: 'exact', command}` or `{type: 'prefix', words}`, as src/policy/scope-rule.ts commandScope. */
export function commandScope(command) {
  const words = command.trim().split(/[ \t]+/);
  if (!words.every((w) => PLAIN_WORD.test(w)) || runsAnother(words[0])) return { type: 'exact', command: command.trim() };
  const prefix = [words[0]];
  for (const w of words.slice(1)) {
    if (!SUBCOMMAND.test(w)) break;
    prefix.push(w);
  }
  return { type: 'prefix', words: prefix };
}
