/** File extensions and the language name a code preview highlights them as. */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  ts: 'typescript', tsx: 'tsx', mts: 'typescript', cts: 'typescript',
  js: 'javascript', jsx: 'jsx', mjs: 'javascript', cjs: 'javascript',
  json: 'json', jsonc: 'json', yaml: 'yaml', yml: 'yaml', toml: 'toml', ini: 'ini',
  py: 'python', rb: 'ruby', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', swift: 'swift',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', cs: 'csharp', php: 'php', scala: 'scala',
  sh: 'bash', bash: 'bash', zsh: 'bash', fish: 'fish', ps1: 'powershell',
  sql: 'sql', html: 'html', htm: 'html', css: 'css', scss: 'scss', vue: 'vue', svelte: 'svelte',
  md: 'markdown', mdx: 'markdown', xml: 'xml', svg: 'xml', tf: 'hcl', hcl: 'hcl',
  lua: 'lua', r: 'r', dart: 'dart', ex: 'elixir', exs: 'elixir', erl: 'erlang', hs: 'haskell',
  ml: 'ocaml', clj: 'clojure', zig: 'zig', nix: 'nix', proto: 'protobuf', graphql: 'graphql',
};

const BY_NAME: Readonly<Record<string, string>> = {
  dockerfile: 'dockerfile', makefile: 'makefile', 'cmakelists.txt': 'cmake', gemfile: 'ruby', rakefile: 'ruby',
};

/** The language of a file from its name (null when unknown): what a code preview's `lang` holds. */
export function codeLanguage(path: string): string | null {
  const name = path.split(/[\\/]/).pop()?.toLowerCase() ?? '';
  if (BY_NAME[name]) return BY_NAME[name];
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1)] ?? null;
}
