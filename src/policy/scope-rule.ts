import { HANDUP_FORMAT } from '../formats/format-catalog.js';
import { MCP_FORMAT } from '../formats/request-formats.js';
import { AppError } from '../lib/errors.js';
import type { HandupRequest } from '../requests/request-schema.js';
import { escapeGlob, escapeRegExp } from './glob.js';
import { requestTool, showsBeyondTitle, shownCommands, type RequestFacts } from './request-facts.js';
import { MAX_PATTERN, type RuleMatch } from './rule-schema.js';

export type Scope = 'session' | 'project' | 'always';

/** A plain word: letters, digits and `_./=:@%+,-`. */
const PLAIN_CHARS = 'A-Za-z0-9_./=:@%+,\\-';
const PLAIN_WORD = new RegExp(`^[${PLAIN_CHARS}]+$`, 'u');
/**
 * A word that reads as a subcommand, not an option (`-x`), a path, a number or a value (`a=b`).
 * A task name of colon-joined words (`rake db:migrate`, `npm run test:unit`) is one: ending the
 * prefix before it would remember `rake` and so approve `rake db:drop`.
 */
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_-]*(?::[A-Za-z0-9_-]+)*$/;

/**
 * Programs whose arguments are another command or a program to run (wrappers, shells,
 * interpreters, package runners, remote shells): their name says nothing of what runs, so
 * `timeout 60 npm test` or `python3 build.py` widened to the program alone would approve
 * `timeout 60 curl …` or any script. A command such a program starts is remembered exactly.
 * (public/js/scope-action.js keeps the same lists; a test holds them equal.)
 */
export const RUNNERS = new Set([
  // wrappers: run the command after them, as another user, in another namespace, with a limit
  'env',
  'sudo',
  'doas',
  'su',
  'runuser',
  'run0',
  'pkexec',
  'gosu',
  'su-exec',
  'setpriv',
  'capsh',
  'sg',
  'newgrp',
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
  'expect',
  'busybox',
  'systemd-run',
  'unshare',
  'nsenter',
  'firejail',
  'bwrap',
  'fakeroot',
  'proxychains',
  'proxychains4',
  'torsocks',
  'caffeinate',
  'chpst',
  'dbus-launch',
  'sandbox-exec',
  'tmux',
  'screen',
  'at',
  'batch',
  'ssh',
  // cluster tools that run kubectl and the like: `microk8s kubectl exec …`
  'microk8s',
  'k3s',
  'k0s',
  'minikube',
  'lima',
  // shells and interpreters: run the script or the code they are given
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
  'jshell',
  'dotnet',
  'wine',
  'py',
  'ipython',
  'irb',
  'elixir',
  'iex',
  'erl',
  'escript',
  'groovy',
  'r',
  'racket',
  'guile',
  'sbcl',
  'clisp',
  'ghci',
  'runghc',
  'runhaskell',
  'raku',
  'perl6',
  'ocaml',
  'kotlin',
  'kotlinc',
  'scala',
  'qjs',
  'wasmtime',
  'wasmer',
  // text tools that run code they are given: an awk program's system(), sed's `e` command
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'sed',
  'gsed',
  // more wrappers: an environment, a Linux distribution or a package manager's shim around a command
  'cross-env',
  'cross-env-shell',
  'dotenv',
  'env-cmd',
  'wsl',
  'corepack',
  'nodemon',
  'ash',
  // editors that run the script or command they are given (`vim -S x.vim`, `emacs --batch -l x.el`)
  'vim',
  'nvim',
  'vi',
  'ex',
  'view',
  'emacs',
  // package runners: run the package or script named next
  'npx',
  'pnpx',
  'bunx',
  'uvx',
  'pipx',
  'tsx',
  'ts-node',
  'esno',
  'jiti',
  'vite-node',
]);

/** Programs that run another program when given one of these subcommands (`npm exec x`, `go run f.go`). */
export const RUNNER_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  // init and create run a create-<name> package; explore runs a command in a package's folder;
  // install and add run the install scripts of whatever package they are given
  npm: [
    'exec',
    'x',
    'init',
    'create',
    'innit',
    'explore',
    'install',
    'i',
    'in',
    'ins',
    'inst',
    'insta',
    'instal',
    'isnt',
    'isnta',
    'isntal',
    'isntall',
    'add',
    'it',
    'install-test',
    'link',
    'ln',
    'update',
    'up',
    'upgrade',
    'rebuild',
    'rb',
  ],
  pnpm: ['exec', 'dlx', 'create', 'add', 'install', 'i', 'update', 'up', 'link', 'rebuild'],
  yarn: ['exec', 'dlx', 'create', 'node', 'add', 'install', 'upgrade', 'link'],
  brew: ['install', 'reinstall', 'upgrade'],
  composer: ['require', 'exec', 'create-project'],
  pip: ['install', 'download', 'wheel'],
  pip3: ['install', 'download', 'wheel'],
  gem: ['install'],
  swift: ['run', 'repl'],
  direnv: ['exec'],
  // a command in every submodule
  git: ['foreach', 'run', 'config'],
  stack: ['exec', 'run', 'runghc', 'runhaskell', 'ghci', 'repl', 'eval', 'script'],
  cabal: ['exec', 'run', 'repl'],
  go: ['run', 'install', 'get', 'generate'],
  cargo: ['run', 'install'],
  rustup: ['run'],
  uv: ['run', 'tool', 'pip', 'add'],
  poetry: ['run', 'add'],
  pipenv: ['run'],
  pdm: ['run'],
  hatch: ['run'],
  rye: ['run'],
  conda: ['run'],
  mamba: ['run'],
  micromamba: ['run'],
  pixi: ['run', 'exec'],
  bundle: ['exec'],
  pyenv: ['exec'],
  rbenv: ['exec'],
  asdf: ['exec'],
  mise: ['exec', 'x', 'run'],
  volta: ['run'],
  fnm: ['exec'],
  nix: ['run', 'shell', 'develop'],
  'nix-shell': ['--run', '--command'],
  docker: ['run', 'exec'],
  'docker-compose': ['run', 'exec'],
  podman: ['run', 'exec'],
  'podman-compose': ['run', 'exec'],
  nerdctl: ['run', 'exec'],
  kubectl: ['exec', 'run', 'debug'],
  oc: ['exec', 'rsh', 'run', 'debug'],
  incus: ['exec'],
  lxc: ['exec'],
  mix: ['run', 'cmd'],
  limactl: ['shell'],
  colima: ['ssh'],
  multipass: ['exec', 'shell'],
  'aws-vault': ['exec'],
  op: ['run'],
  doppler: ['run'],
  dotenvx: ['run'],
  flatpak: ['run'],
  snap: ['run'],
};

// Shared by the names a program goes by (GNU tar, the C compilers, GNU make).
const TAR_OPTIONS = [
  '--checkpoint-action',
  '--to-command',
  '--use-compress-program',
  '-I',
  '--info-script',
  '-F',
  '--new-volume-script',
  '--rmt-command',
  '--rsh-command',
];
const CC_OPTIONS = ['-wrapper', '-fplugin', '-B', '-specs'];
const MAKE_OPTIONS = ['-f', '--file', '--makefile', '--eval', '-E', 'SHELL=', '.SHELLFLAGS='];

/**
 * Options by which a program runs another program or script, or writes where it is told: a word
 * that is one (`-O`, `--upload-pack=…`; a one-letter option with its value attached too) makes a
 * command be remembered exactly, and a prefix rule never passes one later: approving
 * `git grep -n TODO` must not approve `git grep -O./evil.sh TODO`. An entry ending in `=` is a
 * variable a program takes on its command line (`make SHELL=./x.sh`).
 */
export const EXEC_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  git: [
    '-c',
    '--config-env',
    '--exec-path',
    '--upload-pack',
    '--receive-pack',
    '-O',
    '--open-files-in-pager',
    '-x',
    '--exec',
    '--output',
    '--ext-diff',
    '--extcmd',
    '--tool',
    '-t',
  ],
  cargo: ['--config', '-Z'],
  rg: ['--pre'],
  fd: ['-x', '--exec', '-X', '--exec-batch'],
  sort: ['--compress-program'],
  tar: TAR_OPTIONS,
  gtar: TAR_OPTIONS,
  rsync: ['-e', '--rsh', '--rsync-path'],
  scp: ['-S', '-o', '-F', '-J'],
  sftp: ['-S', '-o', '-F', '-J', '-D'],
  find: ['-exec', '-execdir', '-ok', '-okdir'],
  go: ['-exec', '-toolexec', '-overlay'],
  gcc: CC_OPTIONS,
  'g++': CC_OPTIONS,
  cc: CC_OPTIONS,
  'c++': CC_OPTIONS,
  clang: ['-fplugin', '-B', '-Xclang'],
  'clang++': ['-fplugin', '-B', '-Xclang'],
  make: MAKE_OPTIONS,
  gmake: MAKE_OPTIONS,
  cmake: ['-P', '-C'],
  npm: ['--node-options', '--script-shell'],
};

/** The EXEC_OPTIONS of the program `word` names (own keys only, as for RUNNER_SUBCOMMANDS). */
function execOptions(word: string): readonly string[] {
  return programNames(word).flatMap((n) => (Object.hasOwn(EXEC_OPTIONS, n) ? EXEC_OPTIONS[n]! : []));
}

/** Whether `word`, after `program`, is one of its EXEC_OPTIONS. */
function isExecOption(program: string, word: string): boolean {
  return execOptions(program).some((o) => execOptionMatches(o, word));
}

/**
 * A one-letter option anywhere in a bundle (`-nO./x.sh`), a long one however shortened
 * (`--upload-pa=…`: getopt takes any unambiguous start), a one-dash long one with one dash or
 * two (Go takes both), a variable with its value.
 */
function execOptionMatches(option: string, word: string): boolean {
  if (option.endsWith('=')) return word.startsWith(option);
  if (/^-[A-Za-z]$/.test(option)) return new RegExp(`^-(?!-)[A-Za-z0-9]*${option[1]}`).test(word);
  const name = word.split('=')[0]!;
  if (option.startsWith('--')) return name.length > 2 && option.startsWith(name);
  return name === option || name === `-${option}`;
}

/** The same test as a regular expression, for a rule's pattern. */
function execOptionPattern(option: string): string {
  if (option.endsWith('=')) return escapeRegExp(option);
  if (/^-[A-Za-z]$/.test(option)) return `-(?!-)[A-Za-z0-9]*${option[1]}`;
  const end = '(?:=|[ \\t]|$)';
  if (!option.startsWith('--')) return `--?${escapeRegExp(option.slice(1))}${end}`;
  // `--upload-pack` is `--u(?:p(?:l…)?)?`: any start of its name.
  const rest = [...option.slice(3)].reduceRight((inner, c) => `(?:${escapeRegExp(c)}${inner})?`, '');
  return `--${escapeRegExp(option[2]!)}${rest}${end}`;
}

/** `NAME=value` before the program (`FOO=1 sudo …`): the program is a later word. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const programName = (word: string) =>
  word
    .replace(/^.*[/\\]/, '')
    .toLowerCase()
    // Windows launchers: `npx.cmd` is npx.
    .replace(/\.(?:exe|cmd|bat|ps1)$/, '');

/** A script's file extension: `deploy.sh` is a script, not the `sh` command of a snap named `deploy`. */
const SCRIPT_EXTENSION = /\.(?:sh|bash|zsh|fish|ksh|py|pyw|rb|pl|php|lua|js|mjs|cjs|ts|mts|cts|jar|java|node)$/;

/**
 * The names a program goes by: its own, and each part of a dotted one, since a snap's commands
 * are named `<snap>.<command>` (`microk8s.kubectl`, `lxd.lxc`, `docker.compose`); a script's
 * name (`./deploy.sh`) is its own only.
 */
function programNames(word: string): string[] {
  const name = programName(word);
  return name.includes('.') && !SCRIPT_EXTENSION.test(name) ? [name, ...name.split('.')] : [name];
}

/** The subcommands by which the program runs another (RUNNER_SUBCOMMANDS, own keys only: a program named `constructor` is no runner). */
function runnerSubcommands(word: string): readonly string[] {
  return programNames(word).flatMap((n) => (Object.hasOwn(RUNNER_SUBCOMMANDS, n) ? RUNNER_SUBCOMMANDS[n]! : []));
}

/** Whether the command's program runs another command or a script (RUNNERS, RUNNER_SUBCOMMANDS), or comes after an assignment. */
function runsAnother(words: readonly string[]): boolean {
  if (ASSIGNMENT.test(words[0]!)) return true;
  if (
    programNames(words[0]!).some(
      (n) =>
        RUNNERS.has(n) ||
        /^(python|pypy|perl|ruby|php|node|lua|guile|julia|tclsh|wish|racket|scala|ocaml|erl|elixir|ipython|gawk|awk|gsed|sed)[0-9.]*w?$/.test(n),
    )
  )
    return true;
  const subcommands = runnerSubcommands(words[0]!);
  return words.slice(1).some((w) => subcommands.includes(w));
}

/**
 * How a scoped approval matches the command it approved:
 * - `exact`: the command has a word that is not plain (shell syntax, quotes, a glob, `~`, a
 *   space other than a space or tab, a letter outside ASCII): only exactly this command, never
 *   widened. A prefix rule matches plain words only, so it would not pass the very command a
 *   person approved, yet would pass others: approving `git status<no-break space>--short` must
 *   not become `git` followed by anything plain;
 * - `prefix`: the executable and its leading subcommand words (`git status`, `npm run build`),
 *   up to the first option or argument that looks like a path or value. A program that runs
 *   another (RUNNERS) is never a prefix: its command is remembered exactly.
 */
export type CommandScope = { type: 'exact'; command: string } | { type: 'prefix'; words: string[] };

export function commandScope(command: string): CommandScope {
  const words = command.trim().split(/[ \t]+/);
  if (!words.every((w) => PLAIN_WORD.test(w)) || runsAnother(words) || words.slice(1).some((w) => isExecOption(words[0]!, w)))
    return { type: 'exact', command: command.trim() };
  const prefix = [words[0]!];
  for (const w of words.slice(1)) {
    if (!SUBCOMMAND.test(w)) break;
    prefix.push(w);
  }
  // `kubectl --context prod get pods` widened to `kubectl` would pass `kubectl … exec …`: a program
  // with subcommands that run another is widened only with the subcommand it was given.
  if (prefix.length === 1 && runnerSubcommands(words[0]!).length > 0) return { type: 'exact', command: command.trim() };
  return { type: 'prefix', words: prefix };
}

/**
 * The `command` regular expression of a scoped approval: the exact command, or the prefix
 * followed by any number of plain words, so `npm test` never approves
 * `npm test && curl x | sh` (shell syntax is not a plain word). None of those words may be a
 * subcommand by which the program runs another (RUNNER_SUBCOMMANDS): approving
 * `docker compose -f dev.yml ps` must not approve `docker compose exec db dropdb prod`.
 */
export function commandScopePattern(scope: CommandScope): string {
  if (scope.type === 'exact') return `^${escapeRegExp(scope.command)}$`;
  const runs = runnerSubcommands(scope.words[0]!);
  const refused = [...(runs.length > 0 ? [`(?:${runs.map(escapeRegExp).join('|')})(?:[ \\t]|$)`] : []), ...execOptions(scope.words[0]!).map(execOptionPattern)];
  const notRunner = refused.length > 0 ? `(?!${refused.join('|')})` : '';
  return `^${scope.words.map(escapeRegExp).join('[ \\t]+')}(?:[ \\t]+${notRunner}[${PLAIN_CHARS}]+)*$`;
}

/**
 * The `match` of the approve rule a scoped approval stores: the same action (the command
 * prefix, else the tool, else the title) from the same agent, widened by the scope. The agent
 * is what the request says; `integration`, the submit token's verified name, keeps the rule to
 * that token's requests, so another token claiming the same agent gets nothing from it. The
 * commands are those the previews show (a `shell`, else an `argv`; shownCommands). Several
 * commands approve each of them: the rule (an approve rule, matched against every command a
 * later request shows) lets a request through only if each of its commands is one of them. A
 * scope whose source field is missing is refused (400 naming the field).
 *
 * A title is the action only where the submitter wrote it: a handup or MCP request. A wire
 * adapter makes its own title from the frame (its text when that fits on one short line, else
 * the first line or a stock phrase such as "Grant a permission", the rest in the summary), so
 * for those formats a title is remembered only when it is all the request shows: no summary,
 * no preview. Otherwise a rule remembering it would approve whatever later frame gets the same
 * first line or stock phrase.
 */
export function scopeRuleMatch(record: HandupRequest, scope: Scope, format: string = HANDUP_FORMAT): RuleMatch {
  const agent = record.source.agent;
  if (!agent) throw new AppError('invalid_decision', 'scope: needs a request with source.agent');
  const match: RuleMatch = { agent };
  if (record.source.integration) match.integration = record.source.integration;
  if (scope === 'session') {
    if (!record.source.session) throw new AppError('invalid_decision', 'scope: "session" needs a request with source.session');
    match.session = record.source.session;
  } else if (scope === 'project') {
    if (!record.source.repo) throw new AppError('invalid_decision', 'scope: "project" needs a request with source.repo');
    match.repo = escapeGlob(record.source.repo);
  }
  const commands = shownCommands(record);
  const tool = requestTool(record);
  if (commands.length > 0) {
    match.command = commands.map((c) => commandScopePattern(commandScope(c))).join('|');
    if (match.command.length > MAX_PATTERN)
      throw new AppError('invalid_decision', 'scope: this command is too long to remember as a rule; approve it without a scope');
  } else if (tool !== null) match.tool = escapeGlob(tool);
  else if (!titleNamesAction(format, showsBeyondTitle(record)))
    throw new AppError(
      'invalid_decision',
      `scope: this ${format} request shows more than its title (a summary, a preview or an option that says what it approves) and no command or tool, so a rule could not tell it from other requests; approve it without a scope`,
    );
  else match.title = `^${escapeRegExp(record.title)}$`;
  return match;
}

/** Whether a scoped approval of this request could remember its action: a command, a tool, or a title that names it. */
export function namesAction(record: HandupRequest, format: string): boolean {
  return shownCommands(record).length > 0 || requestTool(record) !== null || titleNamesAction(format, showsBeyondTitle(record));
}

/**
 * Whether a request's title names its action: the submitter wrote it (handup, MCP), or a wire
 * adapter's title is all the request shows (scopeRuleMatch).
 */
export function titleNamesAction(format: string, beyondTitle: boolean): boolean {
  return format === HANDUP_FORMAT || format === MCP_FORMAT || !beyondTitle;
}

/** The id prefix of the rules scoped approvals store. */
export const SCOPE_RULE_PREFIX = 'scope-';

/**
 * What a scoped approval's rule needs besides its `match`: the same submitter and the same
 * action. A request made with the admin token has no `integration` to remember, so its rule
 * passes only requests that have none either (the admin token's): otherwise any submit token
 * claiming the same agent would ride on it. The action is the command when a request shows one,
 * else its tool, else its title. So a rule that remembers a tool matches only requests that show
 * no command, and one that remembers a title only requests with neither a command nor a tool:
 * otherwise the agent could put any command behind a title or tool a person once approved for
 * good. A remembered title likewise passes a later frame of a wire format only when its title is
 * all it shows (titleNamesAction): a longer text cut to the same first line is another action.
 * A remembered command passes only requests whose previews are all commands. Null for other rules, and for any rule that does not approve: an operator may name a
 * deny rule `scope-…`, and narrowing it would let through what it refuses (narrowing an approve
 * rule only ever asks a person more).
 */
export function sameActionTest(rule: { id: string; action: string; match: RuleMatch }): ((facts: RequestFacts) => boolean) | null {
  if (rule.action !== 'approve' || !rule.id.startsWith(SCOPE_RULE_PREFIX)) return null;
  const { integration, command, tool } = rule.match;
  const sameSubmitter = integration === undefined ? (f: RequestFacts) => f.integration === null : () => true;
  // A remembered command passes a request that shows commands only: a diff, a file or code beside
  // them (the package.json that `npm test` runs, rewritten) is something the person never saw.
  if (command !== undefined) return (f) => sameSubmitter(f) && f.commandsOnly;
  if (tool !== undefined) return (f) => sameSubmitter(f) && f.commands.length === 0;
  return (f) => sameSubmitter(f) && f.commands.length === 0 && f.tool === null && titleNamesAction(f.format, f.beyondTitle);
}
