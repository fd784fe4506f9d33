/**
 * The command line a command preview shows: its `shell` string, else its `argv` with each word
 * that is not plain in single quotes, else its inline text. The daemon reads the same line
 * (src/policy/request-facts.ts shownCommands).
 */
export function commandLine(p) {
  const c = p.command ?? {};
  return c.shell ?? (c.argv ? c.argv.map(shellQuote).join(' ') : (p.inline ?? ''));
}

export function shellQuote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
