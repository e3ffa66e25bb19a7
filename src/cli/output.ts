/**
 * How a command reports: exactly one result per run, either as human lines or (with --json)
 * as one JSON object on stdout. Warnings and progress go to stderr in both modes, so stdout
 * stays parseable.
 */
export interface Output {
  readonly json: boolean;
  result(data: Record<string, unknown>, humanLines: string[]): void;
  warn(message: string): void;
  note(message: string): void;
}

/** bigint never reaches JSON.stringify as a number: it becomes a digit string. */
function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Where a command writes: its standard output and standard error. */
export interface OutputStreams {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export function createOutput(io: OutputStreams, json: boolean): Output {
  let printed = false;
  return {
    json,
    result(data, humanLines) {
      if (printed) throw new Error('output: a command printed two results');
      printed = true;
      io.stdout(json ? `${JSON.stringify(data, jsonReplacer)}\n` : humanLines.map((line) => `${line}\n`).join(''));
    },
    warn(message) {
      io.stderr(`daybook: warning: ${message}\n`);
    },
    note(message) {
      io.stderr(`daybook: ${message}\n`);
    },
  };
}

/** Left-aligned columns separated by two spaces; every row has the headers' width. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [format(headers), ...rows.map(format)];
}

/**
 * A record as the CLI prints it: the books call the firm a tenant, the CLI (like the spec)
 * calls it an account, so `tenantId` is printed as `accountId`, in the same place.
 */
export function inSpecTerms(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name === 'tenantId' ? 'accountId' : name, value]));
}
