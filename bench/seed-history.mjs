// Seeds a SQLite store with ended requests, written through the store port as the daemon would
// keep them (the record and the facts the simulation reads): realistic command, edit and question requests, decided by people, rules and
// timeouts, resolved over the last 30 days. Used by the `simulate` scenario.
import { join } from 'node:path';
import { ROOT } from './processes.mjs';

const DAY = 86_400_000;
const COMMANDS = [
  'git status',
  'git diff HEAD~1',
  'git log --oneline -20',
  'git push origin main --force',
  'git push origin feature',
  'npm test',
  'npm run build',
  'npm run lint -- --fix',
  'npm publish',
  'rm -rf node_modules',
  'ls -la src',
  'kubectl apply -f deploy/prod.yaml',
  'docker compose up -d',
  'cat package.json',
  'make release',
];
const AGENTS = ['claude-code', 'codex', 'ci-bot', 'my-hook'];
const OPTIONS = [
  { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
];

export async function seedHistory(dataDir, count, { now = Date.now() } = {}) {
  const { openSqliteStore } = await import(join(ROOT, 'dist', 'storage', 'sqlite', 'sqlite-store.js'));
  const { newId } = await import(join(ROOT, 'dist', 'lib', 'ids.js'));
  const { encodeHistoryFacts, historyFacts } = await import(join(ROOT, 'dist', 'policy', 'history-facts.js'));
  const store = openSqliteStore(join(dataDir, 'countersign.db'), { synchronous: 'normal' });
  const batch = 2000;
  for (let start = 0; start < count; start += batch) {
    await store.write(async (tx) => {
      for (let i = start; i < Math.min(count, start + batch); i++) {
        const created = now - Math.floor((i / count) * 29 * DAY) - 60_000;
        const resolved = created + 30_000;
        const shell = COMMANDS[i % COMMANDS.length];
        const agent = AGENTS[i % AGENTS.length];
        const roll = (i * 7919) % 100;
        const status = roll < 70 ? 'approved' : roll < 85 ? 'denied' : roll < 93 ? 'cancelled' : 'expired';
        const decidedBy = status === 'cancelled' ? null : status === 'expired' ? 'timeout' : roll % 5 === 0 ? 'rule' : 'alice';
        const decision =
          decidedBy === null
            ? null
            : {
                option: status === 'approved' ? 'approve' : 'deny',
                content_hash: 'sha256:' + '0'.repeat(64),
                outcome: status === 'approved' ? 'approve' : 'deny',
                feedback: null,
                fields: null,
                decided_by: decidedBy,
                decided_at: resolved,
              };
        const record = {
          id: newId(created),
          title: `Run ${shell}`,
          tool: 'Bash',
          callback_url: null,
          summary: `Agent ${agent} wants to run a command in the api repository.`,
          source: {
            integration: null,
            agent,
            session: `s-${i % 500}`,
            cwd: i % 3 ? '/home/dev/acme/api' : '/srv/acme/deploy',
            repo: 'acme/api',
            branch: 'main',
            host: 'devbox',
          },
          kind: 'command',
          risk: i % 10 === 0 ? 'high' : 'low',
          previews: [{ type: 'command', command: { shell, cwd: '/home/dev/acme/api' } }],
          options: OPTIONS,
          input: null,
          timeout: '10m',
          on_timeout: 'deny',
          dedupe_key: null,
          status,
          content_hash: 'sha256:' + '0'.repeat(64),
          created_at: created,
          expires_at: created + 600_000,
          decision,
        };
        await tx.requests.insert({
          record,
          format: 'handup',
          submitter: 'admin',
          nativeKey: null,
          nativeFrame: null,
          nativeContext: null,
          nativeReply: null,
          resolvedAt: resolved,
        });
        // What the daemon keeps at every terminal transition (src/rules/history-facts-hook.ts).
        await tx.policy.indexEnded(record.id, resolved, encodeHistoryFacts(historyFacts(record, 'handup')));
      }
    });
  }
  await store.close();
}

/** The candidate list the scenario replays: the shapes operators write. */
export const SIMULATED_RULES = [
  { id: 'read-only-git', match: { agent: 'claude-code', kind: 'command', command: '^git (status|diff|log)( |$)' }, action: 'approve' },
  { id: 'no-force-push', match: { command: 'git push .*(--force|-f)( |$)' }, action: 'deny', feedback: 'Force pushes need a person.' },
  { id: 'prod-is-high-risk', match: { repo: 'acme/*', cwd: '**/deploy/**' }, action: 'ask', risk: 'high' },
  { id: 'tests-and-builds', match: { tool: 'Bash', command: '^npm (test|run (build|lint))( |$)' }, action: 'approve' },
  { id: 'quiet-hook-notices', match: { agent: 'my-hook', kind: 'info' }, action: 'dismiss' },
];
