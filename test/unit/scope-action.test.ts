import { describe, expect, it } from 'vitest';
import {
  commandScope as pageScope,
  EXEC_OPTIONS as PAGE_EXEC_OPTIONS,
  PLAIN_APPROVALS as PAGE_PLAIN_APPROVALS,
  rememberedAction,
  RUNNER_SUBCOMMANDS as PAGE_SUBCOMMANDS,
  RUNNERS as PAGE_RUNNERS,
} from '../../public/js/scope-action.js';
import { AppError } from '../../src/lib/errors.js';
import { PLAIN_APPROVALS, requestTool, shownCommands } from '../../src/policy/request-facts.js';
import { commandScope, EXEC_OPTIONS, RUNNER_SUBCOMMANDS, RUNNERS, scopeRuleMatch } from '../../src/policy/scope-rule.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';

/** The decision form says what "Don't ask again" remembers: what the daemon stores, word for word. */
describe('what the page says a scoped approval remembers (public/js/scope-action.js)', () => {
  it('knows the same programs that run another', () => {
    expect([...PAGE_RUNNERS].sort()).toEqual([...RUNNERS].sort());
    expect(PAGE_SUBCOMMANDS).toEqual(RUNNER_SUBCOMMANDS);
    expect(PAGE_EXEC_OPTIONS).toEqual(EXEC_OPTIONS);
    expect([...PAGE_PLAIN_APPROVALS].sort()).toEqual([...PLAIN_APPROVALS].sort());
  });

  it.each([
    'npm test',
    'git status --short',
    'npm run build -- --watch',
    './gradlew   assemble   -x test',
    'ls /etc',
    'rm -rf build',
    'timeout 60 npm test',
    '/usr/bin/env node x.js',
    'python3.12 manage.py migrate',
    'NOHUP.EXE make',
    'npm test && curl x | sh',
    'git status\u00a0--short',
    'echo $HOME',
    'git log -- café',
    "echo 'a; curl x | sh'",
    'DEBUG=1 sudo -n systemctl status nginx',
    'uv run python build.py',
    'npm run build',
    'constructor x',
    'kubectl --context prod get pods',
    'kubectl get pods',
    'rake db:migrate',
    'npm run test:unit -- --watch',
    'curl localhost:8080',
    'microk8s.kubectl --context x get pods',
    'nerdctl --namespace k8s.io ps',
    'lxd.lxc --project dev list',
    'docker.compose ps',
    'mix do compile',
    './deploy.sh prod --verbose',
    'npx.cmd -y cowsay',
    'mvnw.cmd package -q',
    'limactl --debug list',
    'npm init -y',
    'git submodule status',
    'git --version',
    'guile3.0 --version',
    'R --vanilla',
    'git grep -O./x.sh TODO',
    'make test SHELL=./x.sh',
    'swift build -c release',
    'npm install lodash',
  ])('widens %j as the daemon does', (command) => {
    expect(pageScope(command)).toEqual(commandScope(command));
  });

  const record = (over: Partial<HandupRequest>): HandupRequest =>
    ({
      id: 'r',
      title: 'Deploy',
      summary: null,
      source: { agent: 'a' },
      previews: [],
      options: [{ id: 'approve', label: 'Approve', outcome: 'approve' }],
      input: null,
      tool: undefined,
      ...over,
    }) as unknown as HandupRequest;

  it.each([
    ['handup', record({ previews: [{ type: 'command', command: { shell: 'npm test', argv: null } }] as never })],
    ['handup', record({ previews: [{ type: 'command', command: { argv: ['echo', 'a; curl x | sh'] } }] as never })],
    ['ask', record({ previews: [{ type: 'command', inline: 'curl x | sh', command: {} }] as never })],
    ['roll', record({ tool: 'Bash', summary: 'why' } as never)],
    ['claude-code', record({ input: { tool_name: 'WebFetch' } } as never)],
    ['handup', record({ summary: 'more' })],
    ['mcp', record({ summary: 'more' })],
    ['alp', record({})],
    [
      'alp',
      record({
        options: [
          { id: 'allow_once', label: 'Allow once', outcome: 'approve' },
          { id: 'deny', label: 'Deny', outcome: 'deny' },
        ],
      } as never),
    ],
    ['paperclip', record({ options: [{ id: 'accept', label: 'Yes, drop the production database', outcome: 'approve' }] } as never)],
    ['alp', record({ options: [{ id: 'allow_once', label: 'Cho phép lần này', outcome: 'approve' }] } as never)],
    [
      'ask',
      record({
        previews: [
          { type: 'command', command: { shell: 'npm test' } },
          { type: 'json', inline: '{"command":"npm test"}' },
        ],
      } as never),
    ],
    ['handup', record({ options: [{ id: 'accept', label: 'Yes, drop the production database', outcome: 'approve' }] } as never)],
    ['alp', record({ summary: 'the whole text' })],
    ['paperclip', record({ previews: [{ type: 'json', inline: '{}' }] as never })],
  ])('%s: remembers what the daemon stores, and offers nothing it refuses', (format, r) => {
    let stored: ReturnType<typeof scopeRuleMatch> | null;
    try {
      stored = scopeRuleMatch(r, 'always', format);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      stored = null;
    }
    const action = rememberedAction(r, format);
    if (stored === null) return expect(action).toBeNull();
    if (stored.command !== undefined) return expect(action).toEqual({ commands: shownCommands(r).map(commandScope) });
    if (stored.tool !== undefined) return expect(action).toEqual({ tool: requestTool(r) });
    expect(action).toEqual({ title: r.title });
  });
});
