import { expect } from 'vitest';
import type { Config, DeepPartial } from '../../src/config.js';
import type { HookConfig } from '../../src/notify/hook-config.js';
import type { ApiClient } from '../helpers/test-server.js';

/** Shared pieces of the notification tests: hook configs pointing at loopback receivers, and waits. */

export type HookInput = Omit<HookConfig, 'secret'>;

/** Config overrides for a daemon with these hooks; the burst limit is off unless a test sets it. */
export function withHooks(hooks: HookInput[], extra: DeepPartial<Config> = {}): DeepPartial<Config> {
  return {
    ...extra,
    hooks: hooks as HookConfig[],
    notifications: { burst: { window: '1m', max: 0 }, ...extra.notifications } as Config['notifications'],
  };
}

export async function hookDeliveries(api: ApiClient, hook: string): Promise<any[]> {
  const res = await api.get(`/v1/hooks/${hook}/deliveries`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls a hook's deliveries until `done` holds: the worker records attempts asynchronously. */
export async function waitForHookDeliveries(api: ApiClient, hook: string, done: (d: any[]) => boolean): Promise<any[]> {
  for (;;) {
    const d = await hookDeliveries(api, hook);
    if (done(d)) return d;
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const settledAll = (d: any[]) => d.every((x) => x.state === 'delivered' || x.state === 'failed');

export const COMMAND = {
  title: 'Deploy staging',
  kind: 'command',
  risk: 'high',
  summary: 'Roll out build 1234 to staging.\nSecond line of the summary.',
  source: { agent: 'codex', session: 's-1' },
  previews: [{ type: 'command', command: { shell: 'kubectl apply -f staging.yaml' } }],
} as const;
