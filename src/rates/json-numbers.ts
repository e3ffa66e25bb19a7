/**
 * A small JSON reader that keeps each number as its source text, so a quote such as 1.0812
 * is never turned into a float on the way in.
 */

/** Nesting deeper than this is no Frankfurter answer; it also bounds the parser's recursion. */
const MAX_JSON_DEPTH = 16;

/** A JSON value whose numbers keep their source text. */
export type JsonValue =
  | { kind: 'object'; entries: Map<string, JsonValue> }
  | { kind: 'array'; items: JsonValue[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'literal' };

const JSON_WS = /[ \t\n\r]*/y;
const JSON_STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const JSON_LITERAL = /true|false|null/y;

/**
 * Parses `text`, keeping each number as its digits; duplicate keys are refused. Every
 * refusal is `malformed(detail)`, so the caller chooses the error.
 */
export function parseJsonLossless(text: string, malformed: (detail: string) => Error): JsonValue {
  let position = 0;

  const skipWhitespace = () => {
    JSON_WS.lastIndex = position;
    JSON_WS.exec(text);
    position = JSON_WS.lastIndex;
  };
  const take = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match) return undefined;
    position = pattern.lastIndex;
    return match[0];
  };
  const expect = (char: string) => {
    skipWhitespace();
    if (text[position] !== char) throw malformed(`answer is not valid JSON (expected ${char} at ${position})`);
    position += 1;
  };
  const readString = (): string => {
    const token = take(JSON_STRING);
    if (token === undefined) throw malformed(`answer is not valid JSON (expected a string at ${position})`);
    return JSON.parse(token) as string;
  };
  /** After an item: true past a comma (another item follows), false past `close`, refused otherwise. */
  const anotherItem = (close: string): boolean => {
    skipWhitespace();
    if (text[position] === ',') {
      position += 1;
      return true;
    }
    expect(close);
    return false;
  };

  const readValue = (depth: number): JsonValue => {
    if (depth > MAX_JSON_DEPTH) throw malformed(`answer nests deeper than ${MAX_JSON_DEPTH}`);
    skipWhitespace();
    const char = text[position];
    if (char === '{') {
      position += 1;
      const entries = new Map<string, JsonValue>();
      skipWhitespace();
      if (text[position] === '}') {
        position += 1;
        return { kind: 'object', entries };
      }
      do {
        skipWhitespace();
        const key = readString();
        if (entries.has(key)) throw malformed(`answer repeats the key ${JSON.stringify(key)}`);
        expect(':');
        entries.set(key, readValue(depth + 1));
      } while (anotherItem('}'));
      return { kind: 'object', entries };
    }
    if (char === '[') {
      position += 1;
      const items: JsonValue[] = [];
      skipWhitespace();
      if (text[position] === ']') {
        position += 1;
        return { kind: 'array', items };
      }
      do {
        items.push(readValue(depth + 1));
      } while (anotherItem(']'));
      return { kind: 'array', items };
    }
    if (char === '"') return { kind: 'string', value: readString() };
    const number = take(JSON_NUMBER);
    if (number !== undefined) return { kind: 'number', text: number };
    if (take(JSON_LITERAL) !== undefined) return { kind: 'literal' };
    throw malformed(`answer is not valid JSON (unexpected input at ${position})`);
  };

  const value = readValue(0);
  skipWhitespace();
  if (position !== text.length) throw malformed(`answer is not valid JSON (trailing input at ${position})`);
  return value;
}
