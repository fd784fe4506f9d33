/**
 * The help texts: `countersign help`, `countersign help <command>`, `countersign <command> --help`.
 * Plain strings only, so printing help loads nothing else.
 */

const CLIENT_OPTIONS = `every client command takes:
  --url URL      daemon address (else COUNTERSIGN_URL, else http://127.0.0.1 at
                 COUNTERSIGN_PORT, else http://127.0.0.1:7470)
  --token TOKEN  bearer token (else COUNTERSIGN_TOKEN, else COUNTERSIGN_ADMIN_TOKEN,
                 else, for a daemon on this machine, the admin-token file in
                 COUNTERSIGN_DATA_DIR or ./data)
  --json         machine-readable output
  -h, --help     this command's help
`;

const EXIT_CODES = `exit codes (ask, wait, show, approve, deny, answer, cancel):
  0 approved, answered, dismissed, or submitted/pending   1 denied   2 expired
  3 cancelled   4 error (usage, HTTP error including 429, daemon unreachable)
`;

const RECONNECT = `If the daemon goes away while waiting (a restart), the command retries with backoff
until the daemon is back, and gives up (exit 4) only once the request's own deadline
is more than a minute past; a request without a timeout is waited for until decided.`;

export const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `usage: countersign serve [--config FILE]

Runs the daemon. Settings come from config/default.json, then FILE (or COUNTERSIGN_CONFIG),
then COUNTERSIGN_* environment variables. An invalid setting, an unknown or misspelt
key or variable, or an unwritable data directory stops it with exit code 4.
`,
  ask: `usage: countersign ask --title T [options]

Creates a request and prints "<id> pending" (or the record with --json).
  --title T                          what the reviewer is asked (required without --request)
  --summary S                        longer explanation
  --kind command|edit|review|question|info|custom
  --risk low|medium|high
  --option id:label[:approve|deny]   repeatable; replaces the default approve/deny
  --command "<shell>"                show a command preview (kind defaults to command)
  --timeout 10m                      the request's deadline
  --on-timeout deny|approve|expire   what the deadline decides
  --dedupe-key K  --callback-url URL
  --agent A  --session S  --cwd DIR  where the request comes from
  --request FILE|-                   start from a whole Request JSON (flags override it)
  --wait                             block until decided; the exit code tells the outcome

${RECONNECT}

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  ls: `usage: countersign ls [filters]   (also: countersign list)

Lists requests, newest first (admin token). Filters take comma-separated lists:
  --status pending,approved,...  --kind K  --format F  --agent A  --session S  --limit N

${CLIENT_OPTIONS}`,
  show: `usage: countersign show ID

Prints one request in full; the exit code tells its status.

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  wait: `usage: countersign wait ID

Blocks until the request is decided, expired or cancelled; the exit code tells which.

${RECONNECT}

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  approve: `usage: countersign approve ID [--option X] [-m FEEDBACK] [--scope session|project|always]

Approves a pending request: with the option named, else its first approve option.

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  deny: `usage: countersign deny ID [--option X] [-m FEEDBACK]

Denies a pending request: with the option named, else its first deny option. -m tells
the agent why; a request that requires feedback on deny is refused without it.

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  answer: `usage: countersign answer ID --select QID=LABEL... [--text QID=TEXT...] [-m FEEDBACK]

Submits the answers of a question request: --select picks an option by its label
(repeat it for a multi-choice question), --text gives free text.

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  cancel: `usage: countersign cancel ID

Cancels a pending request (exit code 3).

${CLIENT_OPTIONS}
${EXIT_CODES}`,
  tokens: `usage: countersign tokens create NAME [--expires 90d] [--grant G]...
       countersign tokens list
       countersign tokens revoke NAME

Submit tokens for agents (admin token required). The secret is printed once, at create.
  --expires D   the token stops working after D (default: never)
  --grant G     repeatable; lets the token's requests do more than ask:
                resolve_upstream  resolve its requests from the agent's side (native
                                  "resolved elsewhere" follow-ups)
                timeout_approve   create requests with on_timeout approve

${CLIENT_OPTIONS}`,
  hook: `usage: countersign hook claude-code [--wait 55s] [--on-wait ask|deny] [--on-error ask|deny|allow]

A Claude Code command hook: reads the hook JSON Claude Code sends on stdin, asks the daemon
(POST /v1/formats/claude-code/hook), prints the hook output on stdout and exits 0.
  --wait D       how long to hold the call for a decision (default 55s, at most 10m)
  --on-wait      still pending when --wait runs out: ask (Claude Code prompts, the default)
                 or deny
  --on-error     the daemon is unreachable or refuses: ask (the default), deny or allow

${CLIENT_OPTIONS}`,
  integrate: `usage: countersign integrate claude-code [--http|--command] [--matcher 'Bash|Edit|Write']
       [--wait 55s] [--event pre-tool-use|permission-request] [--no-follow-ups]
       [--token-name NAME] [--write FILE]

Prints the .claude/settings.json hooks block that sends Claude Code's tool calls to this
daemon, or merges it into FILE keeping everything else there.
  --http | --command   an HTTP hook (default) or a command hook (countersign hook claude-code)
  --matcher M          which tools ask (a Claude Code matcher; default Bash|Edit|Write)
  --event E            PreToolUse (default) or PermissionRequest hooks
  --no-follow-ups      leave out the hooks that tell the daemon a call ended without it
  --token-name NAME    create a submit token for the hook (admin token needed); printed once
  --write FILE         merge into FILE instead of printing

${CLIENT_OPTIONS}`,
  hooks: `usage: countersign hooks list
       countersign hooks test NAME [--event TYPE]

The notification hooks of the daemon's configuration (admin token required): list shows each
with its last delivery; test sends NAME a sample event now and exits 4 if the attempt fails.

${CLIENT_OPTIONS}`,
  mute: `usage: countersign mute --agent A [--session S] [--for 1h] [--dismiss-notices]
       countersign mute --all [--for 1h]
       countersign mute list

Silences notifications from a source (admin token required), until --for runs out or it is
removed with unmute. --dismiss-notices also dismisses the source's info requests on arrival.

${CLIENT_OPTIONS}`,
  unmute: `usage: countersign unmute ID

Removes a mute (admin token required).

${CLIENT_OPTIONS}`,
  links: `usage: countersign links rotate

Replaces the key decision links are signed with (admin token required): every link already
sent stops working.

${CLIENT_OPTIONS}`,
  rules: `usage: countersign rules list
       countersign rules add ID --action approve|deny|ask|dismiss [matchers] [--feedback F]
           [--set-risk R] [--set-timeout 10m] [--expires 12h]
       countersign rules add --rule FILE|-
       countersign rules test --request FILE|- | --format F --frame FILE|-  [--integration NAME]
       countersign rules rm ID
       countersign rules simulate [--add FILE|- | --rules FILE|-] [--since 30d] [--until DATE] [--limit N]

Policy rules (admin token required; docs/policy.md). Matchers, comma lists where several values
are allowed: --agent A --session S --integration I --format F --kind K --risk R (exact), --tool
GLOB --cwd GLOB --repo GLOB (globs), --command REGEX --title REGEX. First match wins: config
rules, then stored rules, oldest first. simulate replays rules over ended requests and lists
where a person decided otherwise.

${CLIENT_OPTIONS}`,
  auto: `usage: countersign auto [off|low|all] [--for 1h]

Shows or sets auto mode (admin token required): low approves new requests of risk low or
medium, all any risk, until --for runs out. Questions, notices, forms and requests needing
feedback on deny always wait for a person. A daemon restart turns it off.

${CLIENT_OPTIONS}`,
};

/** `list` is `ls`. */
export const ALIASES: Readonly<Record<string, string>> = { list: 'ls' };

export const USAGE = `usage: countersign <command> [options]

daemon:
  serve [--config FILE]                 run the daemon (config: file, then COUNTERSIGN_* env)

requests:
  ask --title T [options]               create a request; prints "<id> pending"
      --summary S  --kind command|edit|review|question|info|custom  --risk low|medium|high
      --option id:label[:approve|deny]  (repeatable; replaces the default approve/deny)
      --command "<shell>"               show a command preview (kind defaults to command)
      --timeout 10m  --on-timeout deny|approve|expire  --dedupe-key K  --callback-url URL
      --agent A  --session S  --cwd DIR
      --request FILE|-                  start from a whole Request JSON (flags override it)
      --wait                            block until decided; exit code tells the outcome
  ls [--status S] [--kind K] [--format F] [--agent A] [--session S] [--limit N]   (or: list)
  show ID
  wait ID                               block until ID is decided, expired or cancelled
  approve ID [--option X] [-m FEEDBACK] [--scope session|project|always]
  deny ID [--option X] [-m FEEDBACK]
  answer ID --select QID=LABEL... [--text QID=TEXT...] [-m FEEDBACK]
  cancel ID

submit tokens (admin):
  tokens create NAME [--expires 90d] [--grant G]...   the secret is printed once
  tokens list
  tokens revoke NAME

agent integrations:
  hook claude-code [--wait 55s] [--on-wait ask|deny] [--on-error ask|deny|allow]
                                        Claude Code command hook: hook JSON on stdin, hook output
                                        on stdout, always exit 0 (daemon down: --on-error, default ask)
  integrate claude-code [--http|--command] [--matcher 'Bash|Edit|Write'] [--wait 55s]
      [--event pre-tool-use|permission-request] [--no-follow-ups]
      [--token-name NAME] [--write FILE]
                                        print the .claude/settings.json hooks block, or merge it
                                        into FILE; --token-name creates a submit token (admin)

policy (admin):
  rules list                            every rule in evaluation order, with hits
  rules add ID --action approve|deny|ask|dismiss [--agent A] [--session S] [--integration I]
      [--format F] [--kind K] [--risk R] (comma lists)  [--tool GLOB] [--cwd GLOB] [--repo GLOB]
      [--command REGEX] [--title REGEX]  [--feedback F] [--set-risk R] [--set-timeout 10m]
      [--expires 12h]                   or: rules add --rule FILE|- (JSON or YAML)
  rules test --request FILE|- | --format F --frame FILE|-  [--integration NAME]
  rules rm ID
  rules simulate [--add FILE|- | --rules FILE|-] [--since 30d] [--until DATE] [--limit N]
  auto [off|low|all] [--for 1h]         show or set auto mode

notifications (admin):
  hooks list                            hooks with their last delivery
  hooks test NAME [--event TYPE]        send a sample event now (exit 4 if it fails)
  mute --agent A [--session S] [--for 1h] [--dismiss-notices]   (--all: every source)
  mute list
  unmute ID
  links rotate                          revoke every decision link sent so far

  countersign <command> --help          one command in detail
  countersign --version                 the version

${CLIENT_OPTIONS}
${EXIT_CODES}`;
