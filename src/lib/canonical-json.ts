import { configure } from 'safe-stable-stringify';

/**
 * RFC 8785 canonical JSON of the values the daemon holds: keys sorted by UTF-16 code units,
 * numbers and strings as JSON.stringify writes them. RFC 8785 and JSON.stringify part ways only
 * on lone surrogates and non-finite numbers, which the edge refuses (src/http/json-body-parser.ts).
 * The same text as the `canonicalize` package at about a third of the cost
 * (test/unit/canonical-json.test.ts compares them).
 */
export const canonicalJson: (value: unknown) => string | undefined = configure({ deterministic: true, bigint: false, circularValue: Error });
