/** Realistic requests for the inbox tests and screenshots. */

const source = (agent: string, extra: Record<string, string> = {}) => ({
  agent,
  session: 'sess-7f3a',
  cwd: '/home/dev/shop',
  repo: 'github.com/acme/shop',
  branch: 'main',
  ...extra,
});

export const COMMAND_REQUEST = {
  title: 'Run database migration on staging',
  kind: 'command',
  risk: 'high',
  summary: 'Applies **3 pending migrations** to `staging-db`. The `orders` table gains an index; this locks writes for ~5s.',
  source: source('claude-code'),
  previews: [{ type: 'command', command: { argv: ['npm', 'run', 'migrate', '--', '--env', 'staging'], cwd: '/home/dev/shop', env_keys: ['DATABASE_URL'] } }],
  timeout: '30m',
};

export const EDIT_REQUEST = {
  title: 'Apply refactor to the auth middleware',
  kind: 'edit',
  risk: 'medium',
  summary: 'Moves token parsing into its own function and adds a test.',
  source: source('codex', { branch: 'refactor/auth' }),
  previews: [
    {
      type: 'diff',
      title: 'src/auth.ts',
      inline: [
        'diff --git a/src/auth.ts b/src/auth.ts',
        '--- a/src/auth.ts',
        '+++ b/src/auth.ts',
        '@@ -1,6 +1,9 @@',
        ' import { verify } from "./jwt";',
        '-export function auth(req) {',
        '-  const token = req.headers.authorization.slice(7);',
        '+export function bearer(req) {',
        '+  const header = req.headers.authorization ?? "";',
        '+  return header.startsWith("Bearer ") ? header.slice(7) : null;',
        '+}',
        '+export function auth(req) {',
        '+  const token = bearer(req);',
        '   return verify(token);',
        ' }',
      ].join('\n'),
    },
  ],
  timeout: '2h',
};

export const QUESTION_REQUEST = {
  title: 'Release plan for v2.3',
  kind: 'question',
  source: source('release-bot'),
  input: {
    questions: [
      {
        id: 'targets',
        header: 'Targets',
        question: 'Which environments should get v2.3 today?',
        multi: true,
        recommended: 0,
        options: [{ label: 'staging', description: 'Internal testers only' }, { label: 'eu-west', description: 'About 40% of traffic' }, { label: 'us-east' }],
      },
      { id: 'notes', question: 'Anything the release notes should mention?', allow_free_text: true },
    ],
  },
};

export const REVIEW_REQUEST = {
  title: 'Publish the pricing page update',
  kind: 'review',
  risk: 'low',
  source: source('site-agent', { branch: 'pricing' }),
  previews: [
    {
      type: 'markdown',
      title: 'Announcement',
      inline: '## New plans\n\n- **Team**: $12/seat\n- *Business*: $29/seat\n\nSee [the docs](https://example.com/pricing).',
    },
    { type: 'json', title: 'plans.json', inline: '{"team":{"price":12},"business":{"price":29}}' },
    { type: 'code', title: 'pricing.css', lang: 'css', inline: '.plan { display: grid; gap: 1rem; }' },
    { type: 'text', title: 'Commit message', inline: 'pricing: new Team and Business plans' },
    { type: 'html', title: 'pricing.html', inline: '<h1 id="frame-heading">Pricing</h1><script>parent.document.title = "pwned"</script><p>Team plan</p>' },
  ],
  input: { feedback: 'required_on_deny' },
};
