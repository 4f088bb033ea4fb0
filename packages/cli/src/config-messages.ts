/**
 * The words of a config problem: what is wrong, where, and what to do. Pure functions over the YAML
 * parser's errors and the validator's issues; `config.ts` decides what is checked, this file says it.
 *
 * Every message a person reads starts with where (a config path like `agents[0].workDir`, or a line
 * and column for YAML syntax) and ends with what to change. Validator wording ("Invalid input:
 * expected string, received number") never reaches the operator.
 */
import { type LineCounter, visit, type YAMLError } from 'yaml';
import type { z } from 'zod';

/** A file that holds no YAML mapping at all: what it should start with. */
const EXPECTED_TOP = 'it should hold "agents:" with at least one agent (see deploy/switchyard.example.yaml)';

/**
 * One YAML syntax error in words, with the line and column where a person should look. A quote that is
 * never closed is reported at its opening quote, not at the end of the file where the parser gave up.
 */
export function describeYamlError(
  error: YAMLError,
  doc: Parameters<typeof visit>[0],
  lines: LineCounter,
): string {
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  const end = error.pos[0];
  if (error.code === 'MISSING_CHAR' && /closing .?quote/i.test(error.message)) {
    let opened: number | undefined;
    visit(doc, {
      Scalar(_key, node) {
        const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
        if (quoted && node.range && node.range[0] < end && node.range[1] >= end) opened = node.range[0];
      },
    });
    if (opened !== undefined) {
      const quote = /'/.test(error.message) ? "'" : '"';
      return `${at(opened)}: the ${quote === '"' ? 'double' : 'single'} quote opened here is never closed: end the value with ${quote} on the same line`;
    }
  }
  const bracket = /end with an? ([\]}])/.exec(error.message)?.[1];
  if (bracket !== undefined) {
    let opened: number | undefined;
    const flowEndingHere = (node: { flow?: boolean; range?: [number, number, number] | null }) => {
      if (node.flow && node.range && node.range[1] === end) opened = node.range[0];
    };
    visit(doc, { Seq: (_key, node) => flowEndingHere(node), Map: (_key, node) => flowEndingHere(node) });
    if (opened !== undefined) {
      const [open, what] = bracket === ']' ? ['[', 'list'] : ['{', 'mapping'];
      return `${at(opened)}: the ${open} opened here is never closed: end the ${what} with ${bracket} (on one line, or with its items indented under the key)`;
    }
  }
  return `${at(end)}: ${sentence(error.message.split('\n')[0] ?? 'YAML syntax error')}: fix the YAML syntax there`;
}

function sentence(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * The validator's error map: each issue zod raises without a message of the schema's own, in words.
 * Pass it as `safeParse(data, { error: configIssueMessage })`; a schema's own `error:` still wins.
 */
export function configIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const input = issue.input;
  switch (issue.code) {
    case 'invalid_type': {
      if (input === undefined) return `is missing: add it, as ${expectedWords(issue.expected)}`;
      if ((issue.path ?? []).length === 0) {
        return input === null
          ? `the file is empty: ${EXPECTED_TOP}`
          : `${valueWords(input)}: ${EXPECTED_TOP}`;
      }
      if (input === null) return `is empty: give it ${expectedWords(issue.expected)}, or remove the line`;
      const quoteIt =
        issue.expected === 'string' && (typeof input === 'number' || typeof input === 'boolean')
          ? `; to mean the text, quote it: "${String(input)}"`
          : '';
      return `must be ${expectedWords(issue.expected)}, but it is ${valueWords(input)}${quoteIt}`;
    }
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = Number(small ? issue.minimum : issue.maximum);
      const inclusive = issue.inclusive !== false;
      const it = input === undefined ? '' : `, but it is ${valueWords(input)}`;
      if (issue.origin === 'array') {
        return small
          ? `must list at least ${bound} item(s)${it}: add to the list`
          : `may list at most ${bound} item(s)${it}: shorten the list`;
      }
      if (issue.origin === 'string') {
        return small
          ? bound <= 1
            ? 'must not be empty: write a value, or remove the line'
            : `must be at least ${bound} characters long`
          : `must be at most ${bound} characters long`;
      }
      const words = small
        ? inclusive
          ? `at least ${bound}`
          : `more than ${bound}`
        : inclusive
          ? `at most ${bound}`
          : `less than ${bound}`;
      return `must be ${words}${it}: change the number`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${
        input === undefined ? '' : `, but it is ${valueWords(input)}`
      }`;
    case 'unrecognized_keys': {
      const known = shapeKeys(issue.schema ?? issue.inst);
      const each = issue.keys.map((key) => {
        const near = nearestKey(key, known);
        return near ? `"${key}" (did you mean ${near}?)` : `"${key}"`;
      });
      const noun = issue.keys.length === 1 ? 'setting' : 'settings';
      const guessed = each.some((e) => e.includes('did you mean'));
      const names = !guessed && known.length > 0 ? `; the settings here are ${known.join(', ')}` : '';
      return `unknown ${noun} ${each.join(', ')}: fix the spelling or remove it${names}`;
    }
    case 'invalid_union':
      return `${input === undefined ? 'is missing' : `is ${valueWords(input)}`}, which is none of the forms this setting takes`;
    case 'invalid_format':
      return `${input === undefined ? 'is missing' : `is ${valueWords(input)}`}, not a valid ${issue.format}`;
    default:
      return undefined;
  }
}

/** The keys an object schema accepts, for "did you mean". */
function shapeKeys(schema: unknown): string[] {
  const shape = (schema as { def?: { shape?: unknown } } | undefined)?.def?.shape;
  return shape && typeof shape === 'object' ? Object.keys(shape) : [];
}

function expectedWords(expected: string): string {
  const words: Record<string, string> = {
    string: 'text',
    number: 'a number',
    int: 'a whole number',
    boolean: 'true or false',
    object: 'a mapping (indented "key: value" lines, or { key: value })',
    array: 'a list ([a, b], or "- item" lines)',
  };
  return words[expected] ?? expected;
}

/** A value as a person would name it in a sentence: `the number 5`, `the text "x"`, `a list`. */
function valueWords(value: unknown): string {
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `${value}`;
    case 'string':
      return value === ''
        ? 'empty text'
        : `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}

/**
 * The known key closest to `key` when it is a plausible misspelling of it (case differences, or an
 * edit distance of at most a third of its length), else undefined.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  const limit = Math.max(1, Math.floor(key.length / 3));
  return best !== undefined && best.distance <= limit ? best.name : undefined;
}

/** Levenshtein distance with adjacent transpositions counted as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, at(i - 2, j - 2) + 1);
      const row = rows[i];
      if (row) row[j] = d;
    }
  }
  return at(a.length, b.length);
}

/** Drops the keys `issues` name as unrecognized from `data` (in place), so the rest can be validated. */
export function dropUnknownKeys(data: unknown, issues: readonly z.core.$ZodIssue[]): void {
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    let at: unknown = data;
    for (const part of issue.path) at = (at as Record<PropertyKey, unknown> | undefined)?.[part];
    if (at && typeof at === 'object') {
      for (const key of issue.keys) delete (at as Record<string, unknown>)[key];
    }
  }
}
