import type { Logger } from 'pino';
import { durationMs } from '../lib/durations.js';
import { ADMIN } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import { requestFacts } from '../policy/request-facts.js';
import { compileMatch, type FactsTest } from '../policy/rule-matcher.js';
import type { RequestEvents } from '../requests/request-events.js';
import type { HandupRequest } from '../requests/request-schema.js';
import { unattendedView } from '../requests/decision-rules.js';
import type { RequestService } from '../requests/request-service.js';
import { DEFAULT_HOOK_TIMEOUT, type DecideHook } from './decide-hook-schema.js';
import { runExecHook } from './exec-hook.js';
import { HookFailure, parseHookAnswer, type HookAnswer } from './hook-answer.js';
import { runUrlHook } from './url-hook.js';

export interface DecideHookRunnerDeps {
  hooks: readonly DecideHook[];
  requests: RequestService;
  events: RequestEvents;
  log: Logger;
  /** The environment hook programs run with (the daemon's, without its own secrets). */
  env: Readonly<Record<string, string | undefined>>;
  userAgent: string;
}

/** Requests a hook may have waiting; past this a request is left to a person (and audited). */
export const HOOK_QUEUE_MAX = 1000;

interface Hook {
  config: DecideHook;
  actor: string;
  matches: FactsTest;
  timeoutMs: number;
  /** One request at a time per hook: a program is never run twice at once. */
  chain: Promise<void>;
  queued: number;
}

/**
 * Decide hooks. For each request this daemon created that is still pending after
 * rules and auto mode (and not held for a person by a deny rule that could not decide it), the
 * matching hooks run one after another, in config order, off the request
 * path, until one decides (through the normal decision path, bound to the record's content_hash,
 * as `hook:<name>`) or one fails. A failure (a timeout, a crash, a non-zero exit, bad JSON, an
 * unknown option, a refused decision) is logged and audited as `hook.failed` and ends the chain:
 * the request stays pending for a person, so a broken hook never fails open, not even into the
 * next hook. An answer that comes after someone else decided is ignored. Not durable: a request
 * whose hooks had not run when the daemon stopped waits for a person.
 */
export function createDecideHookRunner({ hooks, requests, events, log, env, userAgent }: DecideHookRunnerDeps) {
  const list: Hook[] = hooks.map((config) => ({
    config,
    actor: `hook:${config.name}`,
    // As an approve rule does: a hook matching `^git status$` never sees, and so never approves,
    // `git status` shown beside another command.
    matches: compileMatch(config.match ?? {}, { everyCommand: true }),
    timeoutMs: durationMs(config.timeout ?? DEFAULT_HOOK_TIMEOUT),
    chain: Promise.resolve(),
    queued: 0,
  }));
  const shutdown = new AbortController();
  const running = new Set<Promise<void>>();

  async function ask(hook: Hook, record: HandupRequest): Promise<HookAnswer> {
    const c = hook.config;
    if (c.exec) {
      const input = JSON.stringify(record);
      const hookEnv = { ...env, COUNTERSIGN_HOOK: c.name, COUNTERSIGN_REQUEST_ID: record.id };
      const { stdout, stderr } = await runExecHook(c.exec, input, { timeoutMs: hook.timeoutMs, env: hookEnv, signal: shutdown.signal });
      if (stderr) log.debug({ hook: c.name, id: record.id, stderr }, 'decide hook wrote to stderr');
      return parseHookAnswer(stdout, { opa: false });
    }
    const text = await runUrlHook(c.url!, JSON.stringify({ input: record }), { timeoutMs: hook.timeoutMs, userAgent, signal: shutdown.signal });
    return parseHookAnswer(text, { opa: true });
  }

  /** Runs `work` in the hook's own queue, after whatever it is doing. */
  function inQueue<T>(hook: Hook, work: () => Promise<T>): Promise<T> {
    if (hook.queued >= HOOK_QUEUE_MAX) return Promise.reject(new HookFailure('queue_full', `${HOOK_QUEUE_MAX} requests are already waiting for this hook`));
    hook.queued++;
    const result = hook.chain.then(work);
    hook.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result.finally(() => hook.queued--);
  }

  async function failed(hook: Hook, record: HandupRequest, failure: HookFailure) {
    log.warn({ hook: hook.config.name, id: record.id, reason: failure.reason, error: failure.message }, 'decide hook failed; the request stays pending');
    await requests.note(record.id, 'hook.failed', hook.actor, { hook: hook.config.name, reason: failure.reason, error: failure.message });
  }

  /** One hook's turn; true when the chain should go on to the next hook. */
  async function turn(hook: Hook, record: HandupRequest, personOnly: readonly string[]): Promise<boolean> {
    return inQueue(hook, async () => {
      if (shutdown.signal.aborted) return false;
      // Someone may have decided while this request waited in the queue: do not run for nothing.
      const current = await requests.get(record.id, ADMIN);
      if (current.record.status !== 'pending') return false;
      // A hook sees, and may choose, only what may be chosen without a person: never a grant for
      // the whole session (unattendedView), as rules, auto mode and the clock.
      const answer = await ask(hook, unattendedView(current.record, personOnly));
      if (answer.type === 'none') return true;
      if (personOnly.includes(answer.option)) {
        throw new HookFailure('refused', `option "${answer.option}" grants more than this request (a whole session): only a person may choose it`);
      }
      const body = { option: answer.option, content_hash: record.content_hash, feedback: answer.feedback, fields: answer.fields };
      try {
        await requests.decideAs(record.id, body, hook.actor);
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_pending') return false;
        if (err instanceof AppError && err.status < 500) throw new HookFailure('refused', `the decision was refused: ${err.message}`);
        throw err;
      }
      return false;
    });
  }

  async function run(record: HandupRequest, format: string, personOnly: readonly string[]) {
    const facts = requestFacts(record, format);
    for (const hook of list) {
      if (!hook.matches(facts)) continue;
      try {
        if (!(await turn(hook, record, personOnly))) return;
      } catch (err) {
        if (shutdown.signal.aborted) return;
        const failure = err instanceof HookFailure ? err : new HookFailure('refused', (err as Error).message);
        await failed(hook, record, failure).catch((e: unknown) => log.error({ err: e, id: record.id }, 'cannot audit a failed decide hook'));
        return;
      }
    }
  }

  const unsubscribe =
    list.length === 0
      ? () => {}
      : events.on((e) => {
          // Only requests created here: each daemon runs the hooks of its own creates, once.
          if (e.type !== 'request.created' || e.remote || e.forPerson || e.request.status !== 'pending' || shutdown.signal.aborted) return;
          const p = run(e.request, e.format, e.personOnly ?? []).catch((err: unknown) => log.error({ err, id: e.request.id }, 'decide hooks failed'));
          running.add(p);
          void p.finally(() => running.delete(p));
        });

  return {
    /** Stops taking requests and kills hook programs still running; resolves when every chain has ended. */
    async stop(): Promise<void> {
      unsubscribe();
      shutdown.abort();
      await Promise.allSettled([...running]);
    },
    /** Resolves when no hook is running (tests). */
    async idle(): Promise<void> {
      while (running.size) await Promise.allSettled([...running]);
    },
  };
}

export type DecideHookRunner = ReturnType<typeof createDecideHookRunner>;
