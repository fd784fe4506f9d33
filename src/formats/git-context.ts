import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** What a git work tree says about itself: the repository (from its remote) and the branch. */
export interface GitContext {
  /** `owner/name` from the remote URL (origin first), credentials and host dropped; else the work tree's path. */
  repo: string | null;
  /** The checked-out branch; null when HEAD is detached. */
  branch: string | null;
}

const MAX_FILE_BYTES = 64 * 1024;
const MAX_DEPTH = 64;

/**
 * Reads `repo` and `branch` of the git work tree containing `cwd`, if this machine has it and can
 * read it: only `.git/HEAD`, `.git/config` and a linked work tree's pointer files are read, each
 * at most 64 KiB; git itself is never run. Anything missing or unreadable is null: the request is
 * made without them.
 */
export async function readGitContext(cwd: string): Promise<GitContext | null> {
  if (!isAbsolute(cwd) || cwd.includes('\0')) return null;
  try {
    const found = await findGitDir(resolve(cwd));
    if (!found) return null;
    const head = await readSmall(join(found.gitDir, 'HEAD'));
    if (head === null) return null;
    const ref = /^ref:\s*refs\/heads\/(.+)$/m.exec(head)?.[1]?.trim();
    const config = (await readSmall(join(found.commonDir, 'config'))) ?? '';
    return { repo: repoFromConfig(config) ?? found.workTree, branch: ref || null };
  } catch {
    return null;
  }
}

/** The nearest `.git` at or above `dir`: a directory, or a linked work tree's `gitdir:` file. */
async function findGitDir(start: string): Promise<{ workTree: string; gitDir: string; commonDir: string } | null> {
  let dir = start;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const dotGit = join(dir, '.git');
    const s = await stat(dotGit).catch(() => null);
    if (s?.isDirectory()) return { workTree: dir, gitDir: dotGit, commonDir: dotGit };
    if (s?.isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec((await readSmall(dotGit)) ?? '')?.[1]?.trim();
      if (!pointer) return null;
      const gitDir = resolve(dir, pointer);
      const common = (await readSmall(join(gitDir, 'commondir')))?.trim();
      return { workTree: dir, gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

/**
 * The start of a regular file, or null. Opened without blocking and checked before reading: a
 * FIFO or a device under an agent's `cwd` would otherwise hold a thread of the pool every file
 * read shares, and a few of them would stall the daemon.
 */
async function readSmall(path: string): Promise<string | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buf = Buffer.alloc(MAX_FILE_BYTES);
    const { bytesRead } = await handle.read(buf, 0, MAX_FILE_BYTES, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/** The URL of remote "origin", else of the first remote, as `owner/name`. */
export function repoFromConfig(config: string): string | null {
  const remotes: Array<{ name: string; url: string }> = [];
  let current: string | null = null;
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*remote\s+"([^"]*)"\s*\]$/.exec(line);
    if (section) {
      current = section[1]!;
      continue;
    }
    if (line.startsWith('[')) {
      current = null;
      continue;
    }
    const url = current !== null ? /^url\s*=\s*(.+)$/.exec(line)?.[1]?.trim() : undefined;
    if (url && current !== null) remotes.push({ name: current, url });
  }
  const chosen = remotes.find((r) => r.name === 'origin') ?? remotes[0];
  return chosen ? repoFromUrl(chosen.url) : null;
}

/** `git@github.com:acme/web.git`, `https://user:token@host/acme/web`, `/srv/git/web.git` → the path without `.git`. */
export function repoFromUrl(url: string): string | null {
  let path: string;
  const scp = /^(?:[^@/]+@)?[^:/]+:(?!\/\/)(.+)$/.exec(url);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    try {
      path = new URL(url).pathname;
    } catch {
      return null;
    }
  } else if (scp && !/^[a-zA-Z]:[\\/]/.test(url)) {
    path = scp[1]!;
  } else {
    path = url;
  }
  const cleaned = decodeSafe(path)
    .replace(/\\/g, '/')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/^\/+/, '');
  return cleaned || null;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * `readGitContext` behind a small cache: an agent asks from the same cwd call after call, and each
 * read is several file-system round trips. Entries (misses too) live `ttlMs`, so a branch switch
 * shows within seconds; at most `max` work trees are remembered, the oldest dropped first.
 */
export function createGitContextReader({ now, ttlMs = 10_000, max = 256 }: { now: () => number; ttlMs?: number; max?: number }) {
  const cache = new Map<string, { at: number; value: Promise<GitContext | null> }>();
  return (cwd: string): Promise<GitContext | null> => {
    const hit = cache.get(cwd);
    if (hit && now() - hit.at < ttlMs) return hit.value;
    cache.delete(cwd);
    const value = readGitContext(cwd);
    cache.set(cwd, { at: now(), value });
    if (cache.size > max) cache.delete(cache.keys().next().value!);
    return value;
  };
}
