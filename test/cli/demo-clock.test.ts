import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { demoShellLine } from '../../src/cli/demo.js';
import { addDays } from '../../src/dates.js';
import { CliHarness, expectBadArguments, parseOneObject, waitFor } from './support.js';

/**
 * `daybook demo --clock DAY`: the demo's books, numbering and dates are those of that day, and
 * the server's clock stays there, so a guide's samples come out the same on every run.
 */

interface DemoOutput {
  url: string;
  key: string;
  businesses: { id: string; name: string }[];
  clock?: string;
}

/** What a demo run answered: each read's status and body text, by request. */
interface DemoRun {
  answers: Map<string, string>;
  /** The instant POST /invoices/{id}/remind recorded, after the reads. */
  remindedAt: string;
  printed: DemoOutput;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * Ids are random UUIDs (src/ids.ts), and a cursor is signed with the books' own random
 * secret: both differ between two books files by design. Ids are numbered by first appearance,
 * so the same structure (which row points at which) still has to match; cursors become a mark.
 */
function normalised(answers: Map<string, string>): string[] {
  const numbers = new Map<string, string>();
  const id = (uuid: string) => numbers.get(uuid) ?? (numbers.set(uuid, `id-${numbers.size}`), numbers.get(uuid)!);
  return [...answers].map(([request, body]) => `${request.replace(UUID, id)}\n${body.replace(UUID, id).replace(/"nextCursor":"[^"]+"/g, '"nextCursor":"(cursor)"')}`);
}

async function runDemo(day: string): Promise<DemoRun> {
  const cli = new CliHarness();
  const stop = new AbortController();
  const live = cli.start(['--json', 'demo', '--port', '0', '--clock', day], { stop: stop.signal });
  try {
    await waitFor(live, () => live.stdout().endsWith('\n'), 'the demo object on stdout', 60_000);
    const printed = parseOneObject<DemoOutput>(live.stdout());
    const get = async (path: string): Promise<string> => {
      const response = await fetch(`${printed.url}/api/v1${path}`, { headers: { authorization: `Bearer ${printed.key}` } });
      return `${response.status} ${await response.text()}`;
    };
    const answers = new Map<string, string>();
    answers.set('/customers', await get('/customers'));
    for (const business of printed.businesses) {
      for (const path of ['/invoices', '/today', `/reports/trial-balance?asOf=${day}`, '/review-queue', '/transactions']) {
        const request = `${path}${path.includes('?') ? '&' : '?'}entityId=${business.id}`;
        answers.set(request, await get(request));
      }
    }
    const invoices = JSON.parse((answers.get(`/invoices?entityId=${printed.businesses[0]!.id}`) ?? '').replace(/^200 /, '')) as { invoices: { id: string; status: string }[] };
    const sent = invoices.invoices.find((invoice) => invoice.status === 'sent')!;
    const reminder = await fetch(`${printed.url}/api/v1/invoices/${sent.id}/remind`, { method: 'POST', headers: { authorization: `Bearer ${printed.key}`, 'content-type': 'application/json' }, body: '{}' });
    const remindedAt = ((await reminder.json()) as { remindedAt: string }).remindedAt;
    return { answers, remindedAt, printed };
  } finally {
    stop.abort();
    const result = await live.done;
    cli.cleanup();
    expect(result.code, result.stderr).to.equal(0);
  }
}

function body<T>(run: DemoRun, request: string): T {
  const text = run.answers.get(request);
  expect(text, request).to.match(/^200 /);
  return JSON.parse(text!.slice(4)) as T;
}

describe('daybook demo --clock', function () {
  this.timeout(120_000);
  const day = '2027-01-04';
  let first: DemoRun;
  let second: DemoRun;
  let nextDay: DemoRun;
  before(async () => {
    first = await runDemo(day);
    second = await runDemo(day);
    nextDay = await runDemo(addDays(day, 1));
  });

  it('answers the same reads byte for byte on two fresh books with the same --clock (ids and cursors aside)', () => {
    expect(normalised(second.answers)).to.deep.equal(normalised(first.answers));
    // Not a vacuous match: every read answered, with pages that list rows.
    for (const [request, text] of first.answers) expect(text, request).to.match(/^200 /);
    const transactions = body<{ transactions: unknown[] }>(first, `/transactions?entityId=${first.printed.businesses[0]!.id}`);
    expect(transactions.transactions.length).to.be.greaterThan(10);
  });

  it('dates the books from that day, whatever the machine\'s clock says, and prints the clock', () => {
    expect(first.printed.clock).to.equal(`${day}T00:00:00.000Z`);
    const [bakery] = first.printed.businesses;
    const invoices = body<{ invoices: { number: string; issueDate: string }[] }>(first, `/invoices?entityId=${bakery!.id}`);
    // The newest is the draft issued "today"; the harness's own clock is in 2026.
    expect(invoices.invoices[0]).to.include({ number: 'INV-0008', issueDate: day });
    const today = body<{ signals: { sentence: string }[] }>(first, `/today?entityId=${bakery!.id}`);
    expect(today.signals.map((signal) => signal.sentence)).to.include(`The API key "nightly export" stops working after ${addDays(day, 10)}, in 10 days.`);
  });

  it('serves on a clock fixed at that day\'s midnight (UTC), as serve --ephemeral --clock does', () => {
    expect(first.remindedAt).to.equal(`${day}T00:00:00.000Z`);
    expect(second.remindedAt).to.equal(`${day}T00:00:00.000Z`);
  });

  it('gives other dates for another --clock: the same books, a day later', () => {
    expect(normalised(nextDay.answers)).not.to.deep.equal(normalised(first.answers));
    const dates = (run: DemoRun, shift: number) =>
      run.printed.businesses.flatMap((business) =>
        body<{ invoices: { number: string; issueDate: string; dueDate: string }[] }>(run, `/invoices?entityId=${business.id}`).invoices.map((invoice) => [
          invoice.number,
          addDays(invoice.issueDate, shift),
          addDays(invoice.dueDate, shift),
        ]),
      );
    expect(dates(nextDay, 0)).to.deep.equal(dates(first, 1));
    expect(nextDay.remindedAt).to.equal(`${addDays(day, 1)}T00:00:00.000Z`);
  });
});

describe('daybook demo --clock, refused', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  // The first two are the lines serve --ephemeral --clock gives (test/cli/serve-ephemeral.test.ts).
  for (const [value, message] of [
    ['2027-02-30', '"2027-02-30" is not a day (YYYY-MM-DD) or an ISO 8601 instant (2027-01-31T09:00:00Z)'],
    ['tomorrow', '"tomorrow" is not a day (YYYY-MM-DD) or an ISO 8601 instant (2027-01-31T09:00:00Z)'],
    // A day serve --ephemeral takes, but the demo's two years of history would begin before year 0000.
    ['0001-06-01', "the demo's dates reach two years back and a month ahead of its day: give a day from 0002-01-07 to 9999-12-01"],
  ] as const) {
    it(`refuses --clock ${value} with one line (exit 2), before making any books`, async () => {
      const result = await cli.run(['demo', '--port', '0', '--clock', value]);
      expectBadArguments(result);
      expect(result.stderr).to.equal(`daybook: --clock: ${message}\n`);
      expect(existsSync(cli.dbPath), 'no books file').to.equal(false);
    });
  }
});

describe('the demo’s line for another shell (demoShellLine)', () => {
  it('sets up daybook, DAYBOOK_DB, KEY, H and API in bash, whatever quotes the paths hold', () => {
    const line = demoShellLine("/tmp/it's books/demo.sqlite", 'dbk_abc', 'http://127.0.0.1:3456');
    const shown = spawnSync('bash', ['-c', `${line}\ntype -t daybook; printf '%s\\n' "$DAYBOOK_DB" "$KEY" "$H" "$API"`], { encoding: 'utf8' });
    expect(shown.stdout.split('\n')).to.deep.equal([
      'function',
      "/tmp/it's books/demo.sqlite",
      'dbk_abc',
      'Authorization: Bearer dbk_abc',
      'http://127.0.0.1:3456/api/v1',
      '',
    ]);
  });
});
