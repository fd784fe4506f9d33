import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, envKeys, hookProgramEnv, loadConfig, type Config, type DeepPartial } from '../../src/config.js';
import { runCli } from '../helpers/cli-process.js';

/** `hooks:`, `notifications:` and `public_url`: invalid hooks stop the daemon naming the key. */
describe('hook configuration', () => {
  const load = (overrides: Record<string, unknown>, env: Record<string, string> = {}) => loadConfig({ env, overrides: overrides as DeepPartial<Config> });
  const refuse = (overrides: Record<string, unknown>, key: string, message?: string, env: Record<string, string> = {}) => {
    let err: unknown;
    try {
      load(overrides, env);
    } catch (e) {
      err = e;
    }
    expect(err, `expected ${key} to be refused`).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(key);
    if (message) expect((err as Error).message).toContain(message);
  };
  const hook = (h: Record<string, unknown>) => ({ hooks: [{ name: 'h', webhook: 'https://hooks.example.com/x', ...h }] });

  it('defaults: no hooks, burst 20 per minute, expiring 5m, no reminders, links on; COUNTERSIGN_PUBLIC_URL sets public_url', () => {
    const c = load({});
    expect(c.hooks).toEqual([]);
    expect(c.public_url).toBeNull();
    expect(c.notifications).toEqual({
      remind_every: 'none',
      expiring_before: '5m',
      burst: { window: '1m', max: 20 },
      decision_links: true,
      links_per_minute: 30,
    });
    expect(loadConfig({ env: { COUNTERSIGN_PUBLIC_URL: 'https://approvals.example.com/' } }).public_url).toBe('https://approvals.example.com');
    expect(envKeys().map((k) => k.envName)).toEqual(
      expect.arrayContaining(['COUNTERSIGN_PUBLIC_URL', 'COUNTERSIGN_NOTIFICATIONS_REMIND_EVERY', 'COUNTERSIGN_NOTIFICATIONS_BURST_MAX']),
    );
    expect(envKeys().map((k) => k.envName)).not.toContain('COUNTERSIGN_HOOKS');
  });

  it('accepts every documented shape', () => {
    const c = load(
      {
        public_url: 'https://approvals.example.com',
        hooks: [
          {
            name: 'team-slack',
            webhook: 'https://hooks.slack.com/services/T000/B000/XXXX',
            format: 'slack',
            events: ['request.created', 'request.expiring'],
            match: { risk: ['medium', 'high'] },
            decision_links: true,
          },
          { name: 'phone', webhook: 'https://ntfy.sh/my-secret-topic', format: 'ntfy' },
          { name: 'audit-sink', webhook: 'http://127.0.0.1:9000/events', format: 'json', secret_env: 'AUDIT_SINK_SECRET', include_content: true },
          { name: 'desktop', exec: ['notify-send', 'countersign'], events: ['request.created'], timeout: '5s' },
          { name: 'tpl', webhook: 'https://example.com/t', format: 'template', template: '{"text": "{{text}}"}', content_type: 'application/json' },
          { name: 'globs', webhook: 'https://example.com/g', match: { repo: 'acme/*', cwd: '**/deploy/**', command: '^git (push|pull)', tool: 'spend.*' } },
        ],
      },
      { AUDIT_SINK_SECRET: 'whsec_c2VjcmV0' },
    );
    expect(c.hooks.map((h) => h.name)).toEqual(['team-slack', 'phone', 'audit-sink', 'desktop', 'tpl', 'globs']);
    expect(c.hooks[2]!.secret).toBe('whsec_c2VjcmV0');
  });

  it('refuses invalid hooks naming the key', () => {
    refuse({ hooks: [{ name: 'Bad Name', webhook: 'https://x.example' }] }, 'hooks.0.name');
    refuse({ hooks: [{ name: 'a' }] }, 'hooks.0.webhook', 'exactly one of webhook and exec');
    refuse(hook({ exec: ['x'] }), 'hooks.0.exec', 'exactly one');
    refuse(hook({ webhook: 'ftp://x.example/' }), 'hooks.0.webhook', 'http');
    refuse(hook({ webhook: 'https://user:pw@x.example/' }), 'hooks.0.webhook', 'credentials');
    refuse(hook({ format: 'mattermost' }), 'hooks.0.format');
    refuse(hook({ events: ['request.exploded'] }), 'hooks.0.events.0');
    // A timer cannot wait past 24.8 days: longer would fire at once.
    refuse(hook({ timeout: '30d' }), 'hooks.0.timeout', 'at most 1h');
    refuse(hook({ colour: 'red' }), 'hooks.0.colour', 'unknown');
    refuse(hook({ match: {} }), 'hooks.0.match', 'at least one');
    refuse(hook({ match: { command: '(' } }), 'hooks.0.match.command', 'regular expression');
    refuse(hook({ match: { colour: 'x' } }), 'hooks.0.match.colour');
    refuse(hook({ format: 'template' }), 'hooks.0.template', 'required');
    refuse(hook({ format: 'template', template: '{{#open}}' }), 'hooks.0.template', 'not a valid template');
    refuse(hook({ template: 'x' }), 'hooks.0.template', 'only used with format: template');
    refuse(hook({ format: 'ntfy', webhook: 'https://ntfy.sh/' }), 'hooks.0.webhook', 'topic');
    refuse(hook({ timeout: '30' }), 'hooks.0.timeout');
    refuse({ hooks: [{ name: 'e', exec: ['x'], format: 'slack' }] }, 'hooks.0.format', 'webhook hooks only');
    refuse({ hooks: [{ name: 'e', exec: [] }] }, 'hooks.0.exec');
    refuse({ hooks: [{ name: 'e', exec: 'notify-send hi' }] }, 'hooks.0.exec');
    refuse(
      {
        hooks: [
          { name: 'a', webhook: 'https://x.example' },
          { name: 'a', exec: ['x'] },
        ],
      },
      'hooks.1.name',
      'duplicate',
    );
    refuse(hook({ decision_links: true }), 'hooks.0.decision_links', 'public_url');
    refuse(hook({ secret_env: 'MISSING_SECRET' }), 'hooks.0.secret_env', 'MISSING_SECRET');
    refuse({ public_url: 'approvals.example.com' }, 'public_url');
    refuse({ notifications: { burst: { window: '1m', max: -1 } } }, 'notifications.burst.max');
    refuse({ notifications: { remind_every: 'often' } }, 'notifications.remind_every');
  });

  it('exec programs never see the daemon secrets', () => {
    const c = load({ hooks: [{ name: 's', webhook: 'https://x.example', secret_env: 'HOOK_SIGNING' }] }, { HOOK_SIGNING: 'k' });
    const env = hookProgramEnv(c, { PATH: '/bin', HOME: '/home/x', HOOK_SIGNING: 'k', COUNTERSIGN_ADMIN_TOKEN: 'admin', COUNTERSIGN_CALLBACKS_SECRET: 's' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/x' });
  });

  describe('countersign serve', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('exits 4 naming the key when a hook is invalid', async () => {
      dir = mkdtempSync(join(tmpdir(), 'countersign-hooks-'));
      const file = join(dir, 'config.yaml');
      writeFileSync(file, `data_dir: ${join(dir, 'data')}\nport: 0\nhooks:\n  - name: desktop\n    exec: notify-send\n`);
      const res = await runCli(['serve', '--config', file]);
      expect(res.code).toBe(4);
      expect(res.stderr).toContain('hooks.0.exec');
      expect(res.stdout).not.toContain('listening');
    });
  });
});
