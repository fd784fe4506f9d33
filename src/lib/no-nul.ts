/**
 * Text the stores keep in columns of their own (agents, sessions, dedupe keys, filters on them)
 * may not hold U+0000: PostgreSQL's text cannot, and the API must answer alike on both stores.
 * Text inside the stored JSON (titles, previews) is written escaped and may.
 */
export const noNul = (s: string) => !s.includes('\u0000');
export const NO_NUL = { message: 'must not contain U+0000' } as const;
/** The same rule for a compiled (JSON Schema) check. */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';
