/** The help text: `countersign help`, `countersign <command> --help`. */
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
  ls [--status S] [--kind K] [--format F] [--agent A] [--session S] [--limit N]
  show ID
  wait ID                               block until ID is decided, expired or cancelled
  approve ID [--option X] [-m FEEDBACK] [--scope session|project|always]
  deny ID [--option X] -m FEEDBACK
  answer ID --select QID=LABEL... [--text QID=TEXT...] [-m FEEDBACK]
  cancel ID

submit tokens (admin):
  tokens create NAME [--expires 90d]    the secret is printed once
  tokens list
  tokens revoke NAME

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

every client command takes:
  --url URL      daemon address (else COUNTERSIGN_URL, else http://127.0.0.1:7470)
  --token TOKEN  bearer token (else COUNTERSIGN_TOKEN, else COUNTERSIGN_ADMIN_TOKEN,
                 else the admin-token file in COUNTERSIGN_DATA_DIR or ./data)
  --json         machine-readable output

exit codes (ask, wait, show, approve, deny, answer, cancel):
  0 approved, answered, dismissed, or submitted/pending   1 denied   2 expired
  3 cancelled   4 error (usage, HTTP error including 429, daemon unreachable)
`;
