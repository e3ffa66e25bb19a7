import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { differs, guideBlocks, jsonAnswers, PARTIAL, parseSample, placeholderIn, problemOf } from '../support/guides.js';

/** The guides' runner itself (test/support/guides.ts): what it reads from a page and what it calls a failure. */
describe('the guides runner', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'daybook-guide-runner-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function page(markdown: string) {
    const path = join(dir, 'guide.md');
    writeFileSync(path, markdown);
    return guideBlocks(path, 'guide.md');
  }

  it('reads each sh block with its line, the sample right after it, and the visible not-run marker above it', () => {
    const blocks = page(
      [
        '# A guide',
        '',
        '```sh',
        'curl -s "$API/businesses"',
        '```',
        '```json',
        '{"businesses": []}',
        '```',
        '',
        '_Not run by the guide tests: an nginx file for your own server._',
        '',
        '```sh',
        'nginx -s reload',
        '```',
        '',
        'Prose between.',
        '',
        '```sh',
        'echo hi',
        '```',
        '',
        '```json',
        '{}',
        '```',
      ].join('\n'),
    );
    expect(blocks.map((block) => [block.line, block.code, block.notRun, block.sample?.text ?? null])).to.deep.equal([
      [3, 'curl -s "$API/businesses"', null, '{"businesses": []}'],
      [12, 'nginx -s reload', 'an nginx file for your own server', null],
      [18, 'echo hi', null, null],
    ]);
  });

  it('reads a block indented inside a list item', () => {
    const blocks = page(['1. Back up first:', '', '   ```sh', '   daybook backup --to x.sqlite', '   ```', '   ```json', '   {"ok": true}', '   ```'].join('\n'));
    expect(blocks.map((block) => [block.line, block.code, block.sample?.text])).to.deep.equal([[3, 'daybook backup --to x.sqlite', '{"ok": true}']]);
  });

  it('finds a placeholder a reader would have to fill in, and not a redirection', () => {
    expect(placeholderIn('curl -s "$API/transactions/<id from the list>"')).to.equal('<id from the list>');
    expect(placeholderIn('daybook key create --account <account-id>')).to.equal('<account-id>');
    expect(placeholderIn('jq . < answer.json && cat <<EOF')).to.equal(null);
  });

  it('reads a sample with … as partial, and compares shape and figures, ids and pay links aside', () => {
    const sample = parseSample('{"entity": "Lakeside Bakery", "totals": {"debit": {"cents": "100", …}}, "id": "eeb06a06-…", "cursor": "eyJ2…", "rows": [{"n": 1}, …], "all": [1, 2]}');
    expect(sample).to.deep.equal({ entity: 'Lakeside Bakery', totals: { debit: { cents: '100', [PARTIAL]: true } }, id: 'eeb06a06-…', cursor: 'eyJ2…', rows: [{ n: 1 }], all: [1, 2] });
    const answer = {
      entity: 'Lakeside Bakery',
      totals: { debit: { cents: '100', formatted: '$1.00' } },
      id: '0b8e1f5e-1111-4111-8111-111111111111',
      cursor: 'eyJ2IjoxfQ',
      rows: [{ n: 1 }, { n: 2 }],
      all: [1, 2],
    };
    expect(differs(answer, sample)).to.equal(null);
    expect(differs({ ...answer, entity: 'Ridgeline' }, sample)).to.equal('$.entity: "Ridgeline", the page shows "Lakeside Bakery"');
    expect(differs({ ...answer, extra: 1 }, sample)).to.equal('$: also extra, which the page does not show');
    expect(differs({ ...answer, cursor: 'abc' }, sample)).to.equal('$.cursor: "abc", the page shows "eyJ2…"');
    expect(differs({ ...answer, all: [1, 3] }, sample)).to.equal('$.all[1]: 3, the page shows 2');
    expect(differs({ ...answer, all: [1] }, sample)).to.equal('$.all: 1 items, the page shows 2');
    expect(differs({ ...answer, all: [1, 2, 3] }, sample), 'the first items shown').to.equal(null);
    expect(differs({ entity: 'Lakeside Bakery', id: 'x' }, sample)).to.equal('$: no totals, cursor, rows, all');
    expect(parseSample('{"a": 1} {"b": 2}'), 'two answers in one sample').to.equal(null);
    const elided = parseSample('[1, …, 4]');
    expect(elided).to.deep.equal([1, 4]);
    expect(differs([1, 2, 3, 4], elided), 'the items between elided').to.equal(null);
    expect(differs([1, 2, 3], elided)).to.equal("$: nothing from item 1 on is like the page's item 1 ($[1]: 2, the page shows 4)");
    expect(differs([{ a: 1 }, { a: 2 }, { a: 3 }], parseSample('[{"a": 1}, {…}, {"a": 3}]'))).to.equal(null);
  });

  it('collects the JSON a block printed, one document a line or spread over lines', () => {
    expect(jsonAnswers('HTTP/1.1 200 OK\n{"a": 1}\n{\n  "b": 2\n}\nplain')).to.deep.equal([{ a: 1 }, { b: 2 }]);
    expect(jsonAnswers('{"a": "}"}{"error": {"code": "x"}}[1]'), 'answers one after another on a line').to.deep.equal([{ a: '}' }, { error: { code: 'x' } }, [1]]);
  });

  it('fails a block that exits non-zero, misses a command, answers an error the page does not show, or differs from its sample', () => {
    const [block] = page(['```sh', 'curl -s "$API/businesses"', '```', '```json', '{"count": "2"}', '```'].join('\n'));
    expect(problemOf(block!, { status: 0, output: '{"count": "2"}' })).to.equal(null);
    expect(problemOf(block!, { status: 7, output: 'curl: (7) refused' })).to.match(/^exits 7/);
    expect(problemOf(block!, { status: 0, output: 'bash: daybook: command not found' })).to.match(/^a command is not found/);
    expect(problemOf(block!, { status: 0, output: '{"error": {"code": "not_found"}}' })).to.match(/^answers an error the page does not show/);
    expect(problemOf(block!, { status: 0, output: '{"count": "3"}' })).to.equal('differs from the sample at line 4: $.count: "3", the page shows "2"\n  the answer: {"count":"3"}');
    expect(problemOf(block!, { status: 0, output: `\u001eDAYBOOK-GUIDE-FAILED hledger -f books.journal bal (exit 1)\n{"count": "2"}` })).to.match(/^a command fails: hledger -f books.journal bal \(exit 1\)/);
    const [placeholder] = page(['```sh', 'curl -s "$API/invoices/<id>"', '```'].join('\n'));
    expect(problemOf(placeholder!, { status: 0, output: '' })).to.match(/placeholder <id>/);
  });
});
