/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: every line must be
 * a HELP, a TYPE, a sample or blank; every sample must belong to a family whose TYPE came before
 * it; no family or series may appear twice; histograms must have cumulative `le` buckets ending
 * in `+Inf` that equal their `_count`. Anything else throws, naming the line.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // Prometheus reads floats with Go's ParseFloat, which takes any case; prom-client writes `Nan`.
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: not a number: ${JSON.stringify(text)}`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` from position 0 of `text`; returns the labels and where they end. */
function parseLabels(text: string, where: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    if (eq === -1) throw new Error(`${where}: label without a value`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label ${name} is not quoted`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape in label ${name}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`${where}: expected , or } after label ${name}`);
  }
  return { labels, end: i + 1 };
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sample);
  if (direct && direct.type !== 'histogram') return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const series = new Set<string>();
  text.split('\n').forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) throw new Error(`${where}: a comment that is neither HELP nor TYPE: ${line}`);
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`${where}: HELP for ${name} twice`);
        helps.set(name, rest);
        return;
      }
      if (!TYPES.has(rest)) throw new Error(`${where}: bad type ${rest}`);
      if (families.has(name)) throw new Error(`${where}: TYPE for ${name} twice`);
      families.set(name, { name, help: helps.get(name) ?? '', type: rest as Family['type'], samples: [] });
      return;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`${where}: not a sample: ${line}`);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
    let rest = line.slice(nameEnd);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest, where);
      labels = parsed.labels;
      rest = rest.slice(parsed.end);
    }
    const parts = rest.trim().split(' ');
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`${where}: expected " value [timestamp]": ${line}`);
    const value = parseValue(parts[0]!, where);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp ${parts[1]}`);
    const family = familyOf(name, families);
    if (!family) throw new Error(`${where}: sample ${name} has no TYPE before it`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: series ${key} twice`);
    series.add(key);
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) {
    if (!family.help) throw new Error(`${family.name}: no HELP`);
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

function checkHistogram(family: Family) {
  const groups = new Map<string, Sample[]>();
  const rest = (s: Sample) =>
    JSON.stringify(
      Object.entries(s.labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of family.samples) if (s.name.endsWith('_bucket')) groups.set(rest(s), [...(groups.get(rest(s)) ?? []), s]);
  for (const [labels, buckets] of groups) {
    let last = -Infinity;
    let count = 0;
    for (const b of buckets) {
      if (b.labels.le === undefined) throw new Error(`${family.name}${labels}: a bucket without le`);
      const le = parseValue(b.labels.le, family.name);
      if (le <= last) throw new Error(`${family.name}${labels}: buckets out of order`);
      if (b.value < count) throw new Error(`${family.name}${labels}: buckets are not cumulative`);
      last = le;
      count = b.value;
    }
    if (last !== Infinity) throw new Error(`${family.name}${labels}: no +Inf bucket`);
    const total = family.samples.find((s) => s.name === `${family.name}_count` && rest(s) === labels);
    if (total?.value !== count) throw new Error(`${family.name}${labels}: _count ${total?.value} is not the +Inf bucket ${count}`);
  }
}

/** The value of one series; undefined when it is absent. Labels must match exactly. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}
