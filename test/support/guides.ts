import { readFileSync } from 'node:fs';

/**
 * The shell blocks of a guide (README.md or a page of docs/), as a reader would paste them,
 * and the sample answer each is followed by. Read by test/guides/guides.test.ts, which runs
 * them against fresh demo books and holds each answer against its sample.
 */

export interface GuideBlock {
  file: string;
  /** 1-based line of the block's opening fence. */
  line: number;
  code: string;
  /** Why the block is not run (the visible marker above it), or null when it is run. */
  notRun: string | null;
  /** The fenced block right after it, if any: what the page says the block prints. */
  sample: { info: string; text: string; line: number } | null;
}

/**
 * The visible marker that keeps a block out of the run, on the last line of prose above it:
 * `_Not run by the guide tests: …_`. For blocks that are not meant to run here: a deployment's
 * nginx file, a production `docker run` (which the image check runs instead), the demo the
 * runner starts itself.
 */
const NOT_RUN = /^_Not run by the guide tests[:,]? ?(.*?)\.?_$/;

export function guideBlocks(path: string, shownAs: string): GuideBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  // A fence may be indented (a block inside a list item): it closes at the same indentation.
  const fences: { info: string; start: number; end: number; indent: number }[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^( *)```(\S*)\s*$/.exec(lines[index]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const end = lines.findIndex((line, at) => at > index && line === `${' '.repeat(indent)}\`\`\``);
    if (end === -1) throw new Error(`${shownAs}:${index + 1}: a fence that never closes`);
    fences.push({ info: open[2]!, start: index, end, indent });
    index = end;
  }
  const blocks: GuideBlock[] = [];
  for (const [position, fence] of fences.entries()) {
    if (fence.info !== 'sh') continue;
    const next = fences[position + 1];
    const body = (from: number, to: number, indent: number) => lines.slice(from + 1, to).map((line) => line.slice(indent)).join('\n');
    const sample = next && next.start === fence.end + 1 && next.info !== 'sh' ? { info: next.info, text: body(next.start, next.end, next.indent), line: next.start + 1 } : null;
    blocks.push({
      file: shownAs,
      line: fence.start + 1,
      code: body(fence.start, fence.end, fence.indent),
      notRun: notRunReason(lines, fence.start),
      sample,
    });
  }
  return blocks;
}

function notRunReason(lines: readonly string[], fenceIndex: number): string | null {
  for (let index = fenceIndex - 1; index >= 0; index -= 1) {
    const line = lines[index]!.trim();
    if (line === '') continue;
    const marker = NOT_RUN.exec(line);
    return marker ? marker[1] || 'marked' : null;
  }
  return null;
}

/** A `<…>` placeholder a reader would have to fill in: a runnable block has none. */
export function placeholderIn(code: string): string | null {
  // Not a redirection (`< file`, `<<EOF`, `<(…)`): an angle bracket around words.
  return /<[a-z][a-z0-9 _-]*(?: [a-z0-9 _-]+)*>/i.exec(code)?.[0] ?? null;
}

/** The key parseSample puts in an object the sample shows only in part. */
export const PARTIAL = '__partial__';

/** What parseSample puts in an array for `…`: removed again after parsing, leaving the array marked partial. */
const MORE_ITEMS = '__more__';
/** Arrays the sample shows only in part (it had `…` among their items). */
const partialArrays = new WeakSet<object>();

/**
 * A sample as JSON, reading `…` as "more here, not shown": in an object (`{"a": 1, …}`) the
 * object is partial, in an array (`[1, …]`, `[…, 3]`) the array is, a string `"…"` stands for
 * any value and `"abc…"` for any string starting `abc`. Null when the sample is not JSON even so.
 */
export function parseSample(text: string): unknown {
  let out = '';
  let inString = false;
  const stack: string[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (inString) {
      out += char;
      if (char === '\\') out += text[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') stack.push(char);
    else if (char === '}' || char === ']') stack.pop();
    if (char !== '…') {
      out += char;
      continue;
    }
    out += stack.at(-1) === '{' ? `"${PARTIAL}":true` : `"${MORE_ITEMS}"`;
  }
  try {
    return markPartialArrays(JSON.parse(out));
  } catch {
    return null;
  }
}

function markPartialArrays(value: unknown): unknown {
  if (Array.isArray(value)) {
    // `…` or `{…}` among the items: items elided there.
    const elided = (item: unknown) => item === MORE_ITEMS || (item !== null && typeof item === 'object' && Object.keys(item).join() === PARTIAL);
    const items = value.filter((item) => !elided(item)).map(markPartialArrays);
    if (items.length < value.length) partialArrays.add(items);
    return items;
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, markPartialArrays(item)]));
  }
  return value;
}

/** The JSON documents in a block's output, in order: one a line, spread over lines, or several on one line (curl -s adds no newline). */
export function jsonAnswers(output: string): unknown[] {
  const answers: unknown[] = [];
  for (let start = 0; start < output.length; start += 1) {
    if (output[start] !== '{' && output[start] !== '[') continue;
    const end = closingOf(output, start);
    if (end === -1) continue;
    try {
      answers.push(JSON.parse(output.slice(start, end + 1)));
      start = end;
    } catch {
      // Not JSON after all (a bracket in prose): go on from the next character.
    }
  }
  return answers;
}

/** Where the bracket opened at `start` closes, strings skipped; -1 when it never does. */
function closingOf(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth += 1;
    else if ((char === '}' || char === ']') && --depth === 0) return index;
  }
  return -1;
}

/** Values that differ on every run by design: ids (whole, or their first characters and `…`), keys, pay links. */
function varies(sample: unknown): boolean {
  if (typeof sample !== 'string') return false;
  return (
    /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/.test(sample) ||
    /^dbk_/.test(sample) ||
    /^[0-9a-f]{4,8}(?:-[0-9a-f]{0,4})?…$/.test(sample) ||
    /\/pay\/[A-Za-z0-9_-]+/.test(sample)
  );
}

/**
 * Where `answer` differs from `sample` in shape or figures, as a path and what differs, or null.
 * An object marked partial (`…` in the sample) needs the sample's keys; otherwise the same keys.
 * An array's items as shown must be its first items, item for item (a page may show a list's
 * first rows); with `…` or `{…}` among them, they must appear in the answer in that order. Ids,
 * keys and pay links are not compared; `"…"` matches anything and `"abc…"` what starts `abc`.
 */
export function differs(answer: unknown, sample: unknown, path = '$'): string | null {
  if (sample === null || typeof sample !== 'object') {
    if (varies(sample) || sample === '…') return null;
    if (typeof sample === 'string' && sample.endsWith('…')) {
      return typeof answer === 'string' && answer.startsWith(sample.slice(0, -1)) ? null : `${path}: ${JSON.stringify(answer)}, the page shows ${JSON.stringify(sample)}`;
    }
    return JSON.stringify(answer) === JSON.stringify(sample) ? null : `${path}: ${JSON.stringify(answer)}, the page shows ${JSON.stringify(sample)}`;
  }
  if (Array.isArray(sample)) {
    if (!Array.isArray(answer)) return `${path}: not an array`;
    if (partialArrays.has(sample)) return shownInOrder(answer, sample, path);
    if (answer.length < sample.length) return `${path}: ${answer.length} items, the page shows ${sample.length}`;
    for (const [index, item] of sample.entries()) {
      const found = differs(answer[index], item, `${path}[${index}]`);
      if (found) return found;
    }
    return null;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return `${path}: not an object`;
  const shown = Object.keys(sample).filter((key) => key !== PARTIAL);
  const partial = PARTIAL in sample;
  const keys = Object.keys(answer);
  const missing = shown.filter((key) => !keys.includes(key));
  if (missing.length > 0) return `${path}: no ${missing.join(', ')}`;
  if (!partial) {
    const extra = keys.filter((key) => !shown.includes(key));
    if (extra.length > 0) return `${path}: also ${extra.join(', ')}, which the page does not show`;
  }
  for (const key of shown) {
    const found = differs((answer as Record<string, unknown>)[key], (sample as Record<string, unknown>)[key], `${path}.${key}`);
    if (found) return found;
  }
  return null;
}

/** Each item of `sample`, in order, matched by a later item of `answer` (the items between elided). */
function shownInOrder(answer: unknown[], sample: unknown[], path: string): string | null {
  let from = 0;
  for (const [index, item] of sample.entries()) {
    const at = answer.findIndex((candidate, position) => position >= from && differs(candidate, item) === null);
    if (at === -1) return `${path}: nothing from item ${from} on is like the page's item ${index} (${differs(answer[from], item, `${path}[${from}]`) ?? 'none left'})`;
    from = at + 1;
  }
  return null;
}

/** What the runner's bash prints when any command of a block fails (its ERR trap), then the command and its status. */
export const FAILED_MARK = '\u001eDAYBOOK-GUIDE-FAILED';

/** A block's exit status (-1 when it never finished) and what it printed, stderr included. */
export interface BlockRun {
  status: number;
  output: string;
}

/** What is wrong with a block's run, or null. */
export function problemOf(block: GuideBlock, run: BlockRun): string | null {
  const placeholder = placeholderIn(block.code);
  if (placeholder) return `holds the placeholder ${placeholder}: capture the value with a command the reader sees`;
  if (/command not found/.test(run.output)) return `a command is not found:\n${run.output}`;
  const failed = new RegExp(`^${FAILED_MARK} (.*)$`, 'm').exec(run.output);
  if (failed) return `a command fails: ${failed[1]}\n${run.output.replace(new RegExp(`^${FAILED_MARK} .*\n?`, 'gm'), '')}`;
  if (run.status !== 0) return `exits ${run.status}:\n${run.output}`;
  const statusLine = block.sample && /^HTTP\/[\d.]+ \d{3}.*$/m.exec(block.sample.text)?.[0];
  if (statusLine && !run.output.split('\n').some((line) => line.trim() === statusLine.trim())) {
    return `does not answer ${statusLine} as the sample at line ${block.sample!.line} shows:\n${run.output.slice(0, 2000)}`;
  }
  const answers = jsonAnswers(run.output);
  const sample = block.sample?.info === 'json' ? parseSample(block.sample.text) : null;
  if (block.sample?.info === 'json' && sample === null) return `the sample at line ${block.sample.line} is not JSON, even reading … as "more not shown"`;
  const showsError = sample !== null && typeof sample === 'object' && 'error' in (sample as object);
  const error = answers.find((answer) => answer !== null && typeof answer === 'object' && 'error' in (answer as object));
  if (error && !showsError) return `answers an error the page does not show: ${JSON.stringify(error)}`;
  if (sample !== null) {
    const last = answers.at(-1);
    if (last === undefined) return `prints no JSON; the page shows:\n${block.sample!.text}`;
    const difference = differs(last, sample);
    if (difference) return `differs from the sample at line ${block.sample!.line}: ${difference}\n  the answer: ${JSON.stringify(last).slice(0, 3000)}`;
  }
  return null;
}
