/**
 * An argv as one shell line that runs the same words, each word that is not plain in single
 * quotes, as the inbox shows it. Joined by bare spaces, `["echo", "a; rm -rf ~"]` would read as
 * two commands.
 */
export function quoteArgv(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}
