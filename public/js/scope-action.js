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
  const beyondTitle =
    Boolean(record.summary) || previews.length > 0 || record.options.some((o) => o.outcome === 'approve' && !PLAIN_APPROVALS.has(labelWords(o.label)));
  if (format && format !== 'handup' && format !== 'mcp' && beyondTitle) return null;
  return { title: record.title };
}

/** What an approving option may say without saying what it approves (src/policy/request-facts.ts). */
export const PLAIN_APPROVALS = new Set([
  'approve',
  'approved',
  'allow',
  'allow once',
  'always allow',
  'allow always',
  'allow for this session',
  'accept',
  'accept for session',
  'yes',
  'ok',
  'okay',
  'confirm',
  'continue',
  'proceed',
  'go ahead',
  'submit',
  'agree',
  'grant',
  'permit',
  'run',
  'accept for this session',
  // ALP's own Vietnamese options
  'cho phép',
  'cho phép lần này',
  'luôn cho phép',
  'duyệt',
]);
const labelWords = (label) =>
  label
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

const PLAIN_WORD = /^[A-Za-z0-9_./=:@%+,-]+$/u;
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_-]*(?::[A-Za-z0-9_-]+)*$/;

/** Programs whose arguments are another command or a script: remembered exactly, never by name. */
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
export const RUNNER_SUBCOMMANDS = {
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

/** Options by which a program runs another or writes where it is told (src/policy/scope-rule.ts EXEC_OPTIONS). */
export const EXEC_OPTIONS = {
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

function execOptionMatches(option, word) {
  if (option.endsWith('=')) return word.startsWith(option);
  if (/^-[A-Za-z]$/.test(option)) return new RegExp(`^-(?!-)[A-Za-z0-9]*${option[1]}`).test(word);
  const name = word.split('=')[0];
  if (option.startsWith('--')) return name.length > 2 && option.startsWith(name);
  return name === option || name === `-${option}`;
}

// Own keys only, as for runners.
const isExecOption = (program, word) =>
  programNames(program).some((n) => Object.hasOwn(EXEC_OPTIONS, n) && EXEC_OPTIONS[n].some((o) => execOptionMatches(o, word)));

const programName = (word) =>
  word
    .replace(/^.*[/\\]/, '')
    .toLowerCase()
    // Windows launchers: `npx.cmd` is npx.
    .replace(/\.(?:exe|cmd|bat|ps1)$/, '');

/** `NAME=value` before the program (`FOO=1 sudo …`): the program is a later word. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const SCRIPT_EXTENSION = /\.(?:sh|bash|zsh|fish|ksh|py|pyw|rb|pl|php|lua|js|mjs|cjs|ts|mts|cts|jar|java|node)$/;

/** Its own name and each part of a dotted one (a snap's `microk8s.kubectl`), a script's (`deploy.sh`) its own only. */
function programNames(word) {
  const name = programName(word);
  return name.includes('.') && !SCRIPT_EXTENSION.test(name) ? [name, ...name.split('.')] : [name];
}

// Own keys only: a program named `constructor` is no runner.
const runnerSubcommands = (word) => programNames(word).flatMap((n) => (Object.hasOwn(RUNNER_SUBCOMMANDS, n) ? RUNNER_SUBCOMMANDS[n] : []));

function runsAnother(words) {
  if (ASSIGNMENT.test(words[0])) return true;
  if (
    programNames(words[0]).some(
      (n) =>
        RUNNERS.has(n) ||
        /^(python|pypy|perl|ruby|php|node|lua|guile|julia|tclsh|wish|racket|scala|ocaml|erl|elixir|ipython|gawk|awk|gsed|sed)[0-9.]*w?$/.test(n),
    )
  )
    return true;
  const subcommands = runnerSubcommands(words[0]);
  return words.slice(1).some((w) => subcommands.includes(w));
}

/** `{type: 'exact', command}` or `{type: 'prefix', words}`, as src/policy/scope-rule.ts commandScope. */
export function commandScope(command) {
  const words = command.trim().split(/[ \t]+/);
  if (!words.every((w) => PLAIN_WORD.test(w)) || runsAnother(words) || words.slice(1).some((w) => isExecOption(words[0], w)))
    return { type: 'exact', command: command.trim() };
  const prefix = [words[0]];
  for (const w of words.slice(1)) {
    if (!SUBCOMMAND.test(w)) break;
    prefix.push(w);
  }
  // A program with subcommands that run another is widened only with the subcommand it was given.
  if (prefix.length === 1 && runnerSubcommands(words[0]).length > 0) return { type: 'exact', command: command.trim() };
  return { type: 'prefix', words: prefix };
}
