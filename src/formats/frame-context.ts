import { FORMAT as CLAUDE_CODE } from '../adapters/claude-code.js';
import { createGitContextReader } from './git-context.js';

/** Adds to a native frame's context what takes I/O to find (adapters only translate). */
export type FrameContextReader = (format: string, frame: unknown, context: Readonly<Record<string, string>>) => Promise<Readonly<Record<string, string>>>;

/**
 * A Claude Code hook's `repo` and `branch`, read from the git work tree at its `cwd` when this
 * machine has it, on every path a hook comes in by (the hook endpoint, the generic one, a bridge
 * socket). A caller that names either keeps its own: the command hook reads them on the agent's
 * machine.
 */
export function createFrameContextReader({ now }: { now: () => number }): FrameContextReader {
  const readGit = createGitContextReader({ now });
  return async (format, frame, context) => {
    if (format !== CLAUDE_CODE || context.repo !== undefined || context.branch !== undefined) return context;
    const cwd = (frame as { cwd?: unknown } | null)?.cwd;
    if (typeof cwd !== 'string' || cwd === '') return context;
    const git = await readGit(cwd);
    return { ...context, ...(git?.repo ? { repo: git.repo } : {}), ...(git?.branch ? { branch: git.branch } : {}) };
  };
}
