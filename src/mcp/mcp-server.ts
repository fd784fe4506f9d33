import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import { admitter, type RateLimit } from '../auth/rate-limit.js';
import { submitterKey, type Principal } from '../auth/principal.js';
import type { Clock } from '../lib/clock.js';
import { AppError, validationError } from '../lib/errors.js';
import type { RequestIntake } from '../formats/request-intake.js';
import { MCP_FORMAT } from '../formats/request-formats.js';
import { parseCreateBody } from '../requests/create-body-fast-path.js';
import {
  OptionSchema,
  PreviewInputSchema,
  QuestionSchema,
  RiskSchema,
  SourceSchema,
  STATUSES,
  TimeoutTextSchema,
  TitleSchema,
  type Answer,
  type CreateRequestBody,
  type HandupRequest,
} from '../requests/request-schema.js';
import type { RequestService } from '../requests/request-service.js';
import type { Waiters } from '../requests/waiters.js';

export interface McpServerDeps {
  requests: RequestService;
  waiters: Waiters;
  rateLimit: RateLimit;
  /** The create path every request takes. */
  intake: RequestIntake;
  clock: Clock;
  version: string;
  /** Who is calling (the bearer token of this HTTP request). */
  principal: Principal;
  /** Throws `unauthorized` when that token no longer authenticates (revoked during a wait). */
  stillAuthenticated: () => Promise<void>;
  /** The client's `clientInfo.name` from its `initialize`, when known: the default `source.agent`. */
  clientName: string | null;
  /** How often a long wait tells a client that asked for progress that it is still waiting. */
  progressIntervalMs?: number;
  /** Where a tool's unexpected failure is logged; the client hears only "internal error", as over HTTP. */
  logError: (err: unknown) => void;
}

export const MCP_WAIT_MAX_SECONDS = 300;
const PROGRESS_INTERVAL_MS = 10_000;

/** What the model reads first (MCP `initialize`): when to ask, and that pending means wait. */
export const MCP_INSTRUCTIONS = `countersign is the approval broker your operator runs. Before you do something consequential that a person should sign off (a command that changes or deletes things, a deploy, a payment, a message to other people, an edit outside your task), call request_approval; to ask the person a question, call ask_question.
Each returns the request. Its status tells you what to do:
- "pending": nobody has decided yet. Do NOT proceed. Call wait_for_decision with its id (again while it stays pending).
- "approved": go ahead, exactly as described in the request.
- "denied": do not do it; read decision.feedback for why.
- "answered": read the answers (keyed by question id).
- "expired" or "cancelled": nobody approved it; do not proceed.
Never treat a pending or missing answer as approval.`;

const RequestShape = z.looseObject({
  id: z.string(),
  title: z.string(),
  kind: z.string(),
  status: z.enum(STATUSES),
  content_hash: z.string(),
  created_at: z.number(),
  expires_at: z.number().nullable(),
  decision: z.looseObject({}).nullable(),
});
const AnswerShape = z.object({ selected: z.array(z.string()), text: z.string().nullable().optional() });
const OneRequest = z.object({
  request: RequestShape.describe('the handup Request record'),
  answers: z.record(z.string(), AnswerShape).optional().describe('for an answered question request: the answers keyed by question id'),
});
const ManyRequests = z.object({ requests: z.array(RequestShape) });

const waitSeconds = z.number().int().min(0).max(MCP_WAIT_MAX_SECONDS);
const RequestId = z.string().min(1).max(64);

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Text on one line: a title or feedback with line breaks would split a request's line in two. */
const oneLine = (text: string) => text.replace(/\s*[\r\n\v\f\u0085\u2028\u2029]+\s*/g, ' ');

/** The line clients that only read text see. */
function line(r: HandupRequest): string {
  const what = `request ${r.id} "${oneLine(r.title)}" is ${r.status}`;
  const feedback = r.decision?.feedback ? ` (feedback: ${oneLine(r.decision.feedback)})` : '';
  if (r.status === 'pending') return `${what}: nobody has decided yet. Do not proceed; call wait_for_decision with this id.`;
  if (r.status === 'approved') return `${what}${feedback}: go ahead.`;
  if (r.status === 'denied') return `${what}${feedback}: do not do it.`;
  if (r.status === 'answered') return `${what}: ${JSON.stringify(r.decision?.fields?.answers ?? {})}`;
  return `${what}: nobody approved it; do not proceed.`;
}

function one(r: HandupRequest): CallToolResult {
  const answers = r.status === 'answered' ? (r.decision?.fields?.answers as Record<string, Answer> | null | undefined) : undefined;
  return { content: [{ type: 'text', text: line(r) }], structuredContent: { request: r, ...(answers ? { answers } : {}) } };
}

function many(rs: HandupRequest[]): CallToolResult {
  const text = rs.length ? rs.map(line).join('\n') : 'no requests';
  return { content: [{ type: 'text', text }], structuredContent: { requests: rs } };
}

/** An error as an MCP tool result (`isError`), with the message the HTTP API gives. */
function failure(err: AppError): CallToolResult {
  return { content: [{ type: 'text', text: err.message }], isError: true };
}

/**
 * The MCP server for one caller: the tools create and read requests through the
 * same service as the HTTP API, so a submit token sees and ends only its own requests. Made per
 * HTTP request (stateless transport): nothing is kept between calls.
 */
export function createMcpServer(deps: McpServerDeps): McpServer {
  const { requests, waiters, rateLimit, intake, clock, principal, clientName } = deps;
  const progressEvery = deps.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
  const server = new McpServer({ name: 'countersign', version: deps.version }, { instructions: MCP_INSTRUCTIONS, capabilities: { tools: {} } });

  const get = async (id: string) => (await requests.get(id, principal)).record;

  /**
   * Waits until one of `ids` ends or `seconds` pass, then reads them all back. A client that sent
   * a progress token hears every few seconds that the wait goes on, so its own timeout can restart.
   */
  async function settle(ids: string[], seconds: number, extra: Extra): Promise<HandupRequest[]> {
    const current = await Promise.all(ids.map(get));
    if (seconds === 0 || current.some((r) => r.status !== 'pending')) return current;
    const token = extra._meta?.progressToken;
    let ticks = 0;
    let timer: ReturnType<Clock['setTimer']> | null = null;
    const tick = () => {
      ticks += 1;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token!, progress: ticks, message: `still pending after ${Math.round((ticks * progressEvery) / 1000)} s` },
        })
        .catch(() => undefined);
      timer = clock.setTimer(tick, progressEvery);
    };
    if (token !== undefined) timer = clock.setTimer(tick, progressEvery);
    try {
      await waiters.waitAny(ids, seconds * 1000, async () => (await Promise.all(ids.map(get))).some((r) => r.status !== 'pending'), extra.signal);
    } finally {
      if (timer) clock.clearTimer(timer);
    }
    await deps.stillAuthenticated();
    return Promise.all(ids.map(get));
  }

  async function create(body: CreateRequestBody, waitFor: number, extra: Extra): Promise<CallToolResult> {
    const checked = parseCreateBody(body);
    if (!checked.success) throw validationError('invalid_request', checked.error.issues);
    const { stored } = await intake.create(checked.data, { principal, format: MCP_FORMAT, admit: admitter(rateLimit, principal) });
    const [record] = await settle([stored.record.id], waitFor, extra);
    return one(record!);
  }

  /** `source` as the caller gave it, with `agent` defaulting to the MCP client's name. */
  const withAgent = (source: z.infer<typeof SourceSchema> | undefined) => {
    const agent = source?.agent ?? clientName;
    return { ...(source ?? {}), ...(agent ? { agent } : {}) };
  };

  const guard =
    <A>(fn: (args: A, extra: Extra) => Promise<CallToolResult>) =>
    async (args: A, extra: Extra): Promise<CallToolResult> => {
      try {
        return await fn(args, extra);
      } catch (err) {
        if (err instanceof AppError) return failure(err);
        // Its message may name files, hosts or SQL: logged here, never sent.
        deps.logError(err);
        return failure(new AppError('internal_error', 'internal error'));
      }
    };

  /** Each tool's input schema and handler, for the tools/call handler below. */
  const tools = new Map<string, { input: z.ZodType; run: (args: unknown, extra: Extra) => Promise<CallToolResult> }>();
  const tool = <S extends z.ZodObject>(
    name: string,
    config: { title: string; description: string; inputSchema: S; outputSchema: z.ZodObject },
    run: (args: z.infer<S>, extra: Extra) => Promise<CallToolResult>,
  ) => {
    const guarded = guard(run);
    server.registerTool(name, config, guarded as never);
    tools.set(name, { input: config.inputSchema, run: guarded as (args: unknown, extra: Extra) => Promise<CallToolResult> });
  };

  tool(
    'request_approval',
    {
      title: 'Ask a person to approve an action',
      description:
        'Creates an approval request in countersign and returns it. Status "pending" means nobody decided yet: do not proceed, call wait_for_decision. Give a command to show it as a command preview.',
      inputSchema: z.strictObject({
        title: TitleSchema.describe('what you want to do, in one line'),
        summary: z.string().optional().describe('why, and what happens if it goes wrong (Markdown)'),
        kind: z.enum(['command', 'edit', 'review', 'custom']).optional(),
        command: z.string().min(1).optional().describe('the shell command you want to run: shown as a command preview; kind defaults to command'),
        previews: z.array(PreviewInputSchema).max(64).optional().describe('handup previews: text, markdown, code, diff, json, command, ...'),
        options: z.array(OptionSchema).min(1).max(32).optional().describe('the choices; default approve / deny'),
        risk: RiskSchema.optional(),
        timeout: TimeoutTextSchema.nullable().optional().describe('e.g. 30m; the request expires (denied) after it; none or null: no expiry'),
        dedupe_key: z.string().min(1).max(512).optional().describe('asking again with the same key while pending returns the same request'),
        source: SourceSchema.optional().describe('where you run: agent, session, cwd, repo, branch, host'),
        wait_seconds: waitSeconds.optional().describe('wait up to this many seconds (0-300, default 0) for the decision'),
      }),
      outputSchema: OneRequest,
    },
    async (a, extra) => {
      const commandPreview = a.command ? [{ type: 'command' as const, command: { shell: a.command, ...(a.source?.cwd ? { cwd: a.source.cwd } : {}) } }] : [];
      const body: CreateRequestBody = {
        title: a.title,
        ...(a.summary !== undefined ? { summary: a.summary } : {}),
        kind: a.kind ?? (a.command ? 'command' : 'custom'),
        previews: [...commandPreview, ...(a.previews ?? [])],
        ...(a.options ? { options: a.options } : {}),
        ...(a.risk ? { risk: a.risk } : {}),
        ...(a.timeout !== undefined ? { timeout: a.timeout } : {}),
        ...(a.dedupe_key ? { dedupe_key: a.dedupe_key } : {}),
        source: withAgent(a.source),
      };
      return create(body, a.wait_seconds ?? 0, extra);
    },
  );

  tool(
    'ask_question',
    {
      title: 'Ask a person one or more questions',
      description:
        'Creates a question request (1-10 questions, each with options and/or free text). When answered, the result has answers keyed by question id. Status "pending": call wait_for_decision.',
      inputSchema: z.strictObject({
        title: TitleSchema.describe('what the questions are about'),
        questions: z
          .array(QuestionSchema)
          .min(1)
          .max(10)
          .describe('handup questions: {id, question, header?, options?: [{label, description?}], multi?, allow_free_text?}'),
        timeout: TimeoutTextSchema.nullable().optional().describe('e.g. 30m; none or null: no expiry'),
        wait_seconds: waitSeconds.optional().describe('wait up to this many seconds (0-300, default 0) for the answers'),
      }),
      outputSchema: OneRequest,
    },
    async (a, extra) => {
      const body: CreateRequestBody = {
        title: a.title,
        kind: 'question',
        input: { questions: a.questions },
        ...(a.timeout !== undefined ? { timeout: a.timeout } : {}),
        source: withAgent(undefined),
      };
      return create(body, a.wait_seconds ?? 0, extra);
    },
  );

  tool(
    'get_request',
    { title: 'Read a request', description: 'The request as it stands now.', inputSchema: z.strictObject({ id: RequestId }), outputSchema: OneRequest },
    async (a) => one(await get(a.id)),
  );

  tool(
    'wait_for_decision',
    {
      title: 'Wait for decisions',
      description: 'Waits until any of the requests ends (or max_wait_seconds pass) and returns them all. Call again for those still pending.',
      inputSchema: z.strictObject({
        ids: z.array(RequestId).min(1).max(50),
        max_wait_seconds: waitSeconds.optional().describe('default 25, at most 300'),
      }),
      outputSchema: ManyRequests,
    },
    async (a, extra) => many(await settle([...new Set(a.ids)], a.max_wait_seconds ?? 25, extra)),
  );

  tool(
    'cancel_request',
    {
      title: 'Withdraw a request',
      description: 'Cancels a pending request you no longer need.',
      inputSchema: z.strictObject({ id: RequestId }),
      outputSchema: OneRequest,
    },
    async (a) => one((await requests.cancel(a.id, principal)).record),
  );

  tool(
    'list_requests',
    {
      title: 'List requests',
      description: 'Your requests, newest first.',
      inputSchema: z.strictObject({ status: z.enum(STATUSES).optional(), limit: z.number().int().min(1).max(200).optional().describe('default 20') }),
      outputSchema: ManyRequests,
    },
    async (a) => {
      const listed = await requests.list({
        ...(a.status ? { status: [a.status] } : {}),
        // A submit token lists its own requests, as over REST; the admin token sees all.
        ...(principal.kind === 'submit' ? { submitter: submitterKey(principal) } : {}),
        limit: a.limit ?? 20,
      });
      return many(listed.map((s) => s.record));
    },
  );

  // tools/list stays the SDK's; tools/call is ours, so that a tool's input is checked as the HTTP
  // API checks a body and a bad one reads as the HTTP API's error ("title: ..."), not the SDK's.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const found = tools.get(name);
    // An unknown tool is a protocol error, not a tool's failure (MCP's tools/call, "Error Handling").
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const parsed = found.input.safeParse(args ?? {});
    if (!parsed.success) return failure(validationError('invalid_request', parsed.error.issues));
    return found.run(parsed.data, extra);
  });

  return server;
}
