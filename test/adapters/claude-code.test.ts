import { describe, expect, it } from 'vitest';
import { claudeCodeAdapter, hookOutput, insideCwd } from '../../src/adapters/claude-code.js';
import { truncateBytes } from '../../src/lib/truncate-bytes.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitContextReader, readGitContext, repoFromConfig, repoFromUrl } from '../../src/formats/git-context.js';
import { CreateRequestSchema, type HandupRequest } from '../../src/requests/request-schema.js';

/** Edges of the claude-code mapping beyond the golden fixtures. */

const hook = (tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  claudeCodeAdapter.frameSchema.parse({
    session_id: 's',
    cwd: '/home/dev/web',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: 'toolu_1',
    ...extra,
  });
const normalize = (frame: ReturnType<typeof hook>, query: Record<string, string> = {}) => claudeCodeAdapter.normalize(frame, { query });

describe('claude-code mapping', () => {
  it('cuts a Bash title to 512 bytes at a character boundary, and the request still fits handup', () => {
    const command = `echo ${'é'.repeat(400)}`;
    const { request } = normalize(hook('Bash', { command }));
    expect(Buffer.byteLength(request.title, 'utf8')).toBeLessThanOrEqual(512);
    expect(request.title.endsWith('…')).toBe(true);
    expect(request.title).not.toContain('\uFFFD');
    expect(CreateRequestSchema.safeParse(request).success).toBe(true);
    expect(truncateBytes('short', 512)).toBe('short');
  });

  it('treats only paths inside cwd as inside: no prefix tricks, no .., Windows paths in either case', () => {
    expect(insideCwd('/home/dev/web/src/a.ts', '/home/dev/web')).toBe('src/a.ts');
    expect(insideCwd('/home/dev/web2/a.ts', '/home/dev/web')).toBeNull();
    expect(insideCwd('/home/dev/web/../../etc/passwd', '/home/dev/web')).toBeNull();
    expect(insideCwd('C:\\Users\\dev\\web\\src\\a.ts', 'c:\\users\\dev\\web')).toBe('src\\a.ts');
    expect(insideCwd('/a', undefined)).toBeNull();
    expect(normalize(hook('Edit', { file_path: '/home/dev/web/../../etc/hosts', old_string: 'a', new_string: 'b' })).request.risk).toBe('medium');
  });

  it('shows NotebookEdit and ExitPlanMode like any other tool (custom, the input as JSON); an Edit with replace_all says so', () => {
    const input = { notebook_path: '/home/dev/web/a.ipynb', cell_id: 'c7', new_source: '', edit_mode: 'delete' };
    const nb = normalize(hook('NotebookEdit', input)).request;
    expect(nb).toMatchObject({ title: 'Edit a.ipynb', kind: 'custom', previews: [{ type: 'json', inline: JSON.stringify(input, null, 2) }] });
    expect(nb.previews![0]!.inline).toContain('"edit_mode": "delete"');
    const plan = normalize(hook('ExitPlanMode', { plan: '## Plan\n1. Do it' })).request;
    expect(plan).toMatchObject({ title: 'ExitPlanMode', kind: 'custom', previews: [{ type: 'json' }] });
    const other = normalize(hook('Agent', { prompt: 'Find endpoints', description: 'Explore' })).request;
    expect(other).toMatchObject({ title: 'Agent', kind: 'custom', summary: 'Explore', previews: [{ type: 'json' }] });
    const all = normalize(hook('Edit', { file_path: '/home/dev/web/a.py', old_string: 'debug=False', new_string: 'debug=True', replace_all: true })).request;
    expect(all).toMatchObject({ kind: 'edit', previews: [{ type: 'diff', title: 'a.py (every occurrence: replace_all)' }] });
  });

  it('shows the input a tool preview leaves out (a Bash call outside the sandbox is high risk), so it is part of what a decision echoes', () => {
    const plain = normalize(hook('Bash', { command: 'rm -rf ~/data', description: 'Clean up' })).request;
    const unsandboxed = normalize(
      hook('Bash', { command: 'rm -rf ~/data', description: 'Clean up', dangerouslyDisableSandbox: true, run_in_background: true }),
    ).request;
    expect(plain.previews).toHaveLength(1);
    expect(unsandboxed.previews?.[1]).toEqual({
      type: 'json',
      title: 'Other input',
      inline: JSON.stringify({ dangerouslyDisableSandbox: true, run_in_background: true }, null, 2),
    });
    expect([plain.risk, unsandboxed.risk]).toEqual(['medium', 'high']);
    const edit = normalize(hook('Edit', { file_path: '/home/dev/web/a.ts', old_string: 'a', new_string: 'b', extra_flag: 1 })).request;
    expect(edit.previews?.map((p) => p.title)).toEqual(['a.ts', 'Other input']);
  });

  it("takes a reviewer's edit of the tool input only as new values of its own fields, each of the type the tool sent", () => {
    const { request, context } = normalize(hook('Bash', { command: 'npm test', timeout: 60_000 }));
    const approved = (fields: Record<string, unknown>) =>
      ({ ...request, status: 'approved', decision: { option: 'allow', outcome: 'approve', fields } }) as unknown as HandupRequest;
    const check = (fields: Record<string, unknown>) => () => claudeCodeAdapter.checkDecision!(approved(fields), context);
    expect(check({ command: 'npm run lint', timeout: 1000 })).not.toThrow();
    expect(check({ command: 42 })).toThrow(/^fields\.command: must stay a string/);
    expect(check({ run_in_background: true })).toThrow(/^fields\.run_in_background: the tool input has no "run_in_background"/);
    expect(check({ timeout: '1000' })).toThrow(/^fields\.timeout: must stay a number/);
    const denied = { ...approved({ zzz: 1 }), status: 'denied', decision: { option: 'deny', outcome: 'deny', fields: { zzz: 1 } } } as unknown as HandupRequest;
    expect(() => claudeCodeAdapter.checkDecision!(denied, context)).not.toThrow();
  });

  it('takes repo and branch from the caller, never from the frame', () => {
    const { request } = normalize(hook('Bash', { command: 'ls' }, { repo: 'evil/override' }), { repo: 'acme/web', branch: 'main' });
    expect(request.source).toMatchObject({ repo: 'acme/web', branch: 'main' });
  });

  it('answers a pending request by on_wait, and never allows an expired one whatever on_timeout said', () => {
    const { request, context } = normalize(hook('Bash', { command: 'ls' }));
    const base = { ...request, id: 'R1', status: 'pending', decision: null } as any;
    expect(hookOutput(base, 'PreToolUse', context.toolInput).hookSpecificOutput).toMatchObject({ permissionDecision: 'ask' });
    expect(hookOutput(base, 'PreToolUse', context.toolInput, 'deny').hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(hookOutput(base, 'PermissionRequest', context.toolInput)).toEqual({});
    expect(hookOutput(base, 'PermissionRequest', context.toolInput, 'deny')).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } });
    const approvedByTimeout = {
      ...base,
      status: 'expired',
      decision: { option: 'allow', outcome: 'approve', decided_by: 'timeout', feedback: null, fields: null },
    };
    expect(hookOutput(approvedByTimeout, 'PreToolUse', context.toolInput).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(hookOutput(approvedByTimeout, 'PermissionRequest', context.toolInput)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } });
  });
});

describe('git remote → repo', () => {
  it('reads owner/name from the usual remote URL forms, dropping credentials and host', () => {
    expect(repoFromUrl('git@github.com:acme/web.git')).toBe('acme/web');
    expect(repoFromUrl('https://bot:s3cret@github.com/acme/web.git')).toBe('acme/web');
    expect(repoFromUrl('ssh://git@gitlab.example.com:2222/group/sub/project.git')).toBe('group/sub/project');
    expect(repoFromUrl('/srv/git/web.git')).toBe('srv/git/web');
    expect(repoFromConfig('[remote "upstream"]\n\turl = git@github.com:up/web.git\n[remote "origin"]\n\turl = git@github.com:me/web.git\n')).toBe('me/web');
    expect(repoFromConfig('[core]\n\tbare = false\n')).toBeNull();
  });
});

describe('git context cache', () => {
  it('serves a work tree from memory for ttlMs, then reads it again (a branch switch shows)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-gitcache-'));
    try {
      mkdirSync(join(root, '.git'));
      writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      let now = 0;
      const read = createGitContextReader({ now: () => now, ttlMs: 10_000 });
      expect(await read(root)).toEqual({ repo: root, branch: 'main' });
      writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/topic\n');
      now = 9_999;
      expect((await read(root))?.branch).toBe('main');
      now = 10_000;
      expect((await read(root))?.branch).toBe('topic');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('git context of a cwd the agent controls', () => {
  // An agent on the daemon's machine can put a FIFO where HEAD or config is read: opening it to
  // read would wait for a writer, on a thread of the pool every file read shares.
  it('reads a FIFO or a device in .git as nothing, without waiting for a writer', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-gitfifo-'));
    try {
      mkdirSync(join(root, '.git'));
      execFileSync('mkfifo', [join(root, '.git', 'HEAD')]);
      // More at once than the pool has threads: before, each held one until a writer came.
      const reads = await Promise.all(Array.from({ length: 8 }, () => readGitContext(root)));
      expect(reads).toEqual(Array.from({ length: 8 }, () => null));

      rmSync(join(root, '.git', 'HEAD'));
      writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      execFileSync('mkfifo', [join(root, '.git', 'config')]);
      expect(await readGitContext(root)).toEqual({ repo: root, branch: 'main' });

      const linked = mkdtempSync(join(tmpdir(), 'countersign-gitdev-'));
      writeFileSync(join(linked, '.git'), 'gitdir: /dev/zero\n');
      expect(await readGitContext(linked)).toBeNull();
      rmSync(linked, { recursive: true, force: true });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
