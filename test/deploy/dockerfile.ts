/**
 * A small Dockerfile reader for the deploy check: enough of the syntax for this project's
 * Dockerfile (comments, `\` continuations, stages, exec-form JSON, ENV pairs, COPY flags).
 * Anything it does not understand is an error, so the check cannot silently skip a step.
 */

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length) {
    const start = i;
    let logical = '';
    for (;;) {
      const raw = lines[i++] ?? '';
      if (/^\s*#/.test(raw) && logical) continue; // comments inside a continuation are dropped
      const continued = /\\\s*$/.test(raw);
      logical += (logical ? ' ' : '') + raw.replace(/\\\s*$/, '').trim();
      if (!continued || i >= lines.length) break;
    }
    if (!logical || logical.startsWith('#')) continue;
    const m = /^(\S+)\s*(.*)$/.exec(logical)!;
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`line ${start + 1}: cannot read FROM ${args}`);
      stages.push({ image: from[1]!, name: from[2] ?? null, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`line ${start + 1}: ${keyword} before the first FROM`);
    stage.instructions.push({ keyword, args, line: start + 1 });
  }
  return stages;
}

/** `["a","b"]` (exec form) or a shell string run with `/bin/sh -c`. */
export function commandArgv(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith('[')) {
    const argv = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) throw new Error(`not an exec-form array: ${args}`);
    return argv;
  }
  return ['/bin/sh', '-c', trimmed];
}

/** `ENV A=1 B="two words"` (and the legacy `ENV A 1`). */
export function parseEnv(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(args)) {
    const m = /^(\S+)\s+(.*)$/.exec(args);
    if (!m) throw new Error(`cannot read ENV ${args}`);
    out[m[1]!] = m[2]!;
    return out;
  }
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)\s*/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(args))) {
    const v = m[2]!;
    out[m[1]!] = v.startsWith('"') ? JSON.parse(v) : v.startsWith("'") ? v.slice(1, -1) : v;
    consumed = re.lastIndex;
    if (re.lastIndex >= args.length) break;
  }
  if (consumed !== args.length) throw new Error(`cannot read ENV ${args}`);
  return out;
}

export interface CopySpec {
  from: string | null;
  chown: string | null;
  sources: string[];
  dest: string;
}

export function parseCopy(args: string): CopySpec {
  const words = args.trim().startsWith('[') ? [] : args.trim().split(/\s+/);
  if (words.length === 0) throw new Error(`exec-form COPY is not supported by this check: ${args}`);
  let from: string | null = null;
  let chown: string | null = null;
  while (words[0]?.startsWith('--')) {
    const flag = words.shift()!;
    const m = /^--(from|chown|chmod|link)(?:=(.*))?$/.exec(flag);
    if (!m) throw new Error(`unknown COPY flag ${flag}`);
    if (m[1] === 'from') from = m[2] ?? null;
    if (m[1] === 'chown') chown = m[2] ?? null;
  }
  if (words.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from, chown, sources: words.slice(0, -1), dest: words.at(-1)! };
}

/** HEALTHCHECK [--flags] CMD <command>; null for HEALTHCHECK NONE. */
export function parseHealthcheck(args: string): { flags: Record<string, string>; argv: string[] } | null {
  if (/^NONE$/i.test(args.trim())) return null;
  const m = /^((?:--\S+\s+)*)CMD\s+(.*)$/i.exec(args.trim());
  if (!m) throw new Error(`cannot read HEALTHCHECK ${args}`);
  const flags: Record<string, string> = {};
  for (const f of m[1]!.trim().split(/\s+/).filter(Boolean)) {
    const [k, v] = f.replace(/^--/, '').split('=');
    flags[k!] = v ?? '';
  }
  return { flags, argv: commandArgv(m[2]!) };
}
