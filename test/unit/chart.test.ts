import { expect } from 'chai';
import { chartTree, listPostableAccounts, PATH_SEPARATOR, STANDARD_CHART } from '../../src/books/chart.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';

/** The chart's tree walk, which statements and the accounts list share. */
describe('chart of accounts: the tree walk', () => {
  let temp: TempDb;
  const clock = testClock();
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('walks the standard chart depth first, parents before children, siblings by code, with depth and path', () => {
    const business = buildBusiness(temp.db, clock);
    const tree = chartTree(temp.db, business.id);
    expect(tree.slice(0, 7).map((node) => [node.code, node.depth, node.isHeading, node.path])).to.deep.equal([
      ['1000', 0, true, 'Assets'],
      ['1100', 1, true, `Assets${PATH_SEPARATOR}Cash and Bank`],
      ['1110', 2, false, `Assets${PATH_SEPARATOR}Cash and Bank${PATH_SEPARATOR}Business Checking`],
      ['1120', 2, false, `Assets${PATH_SEPARATOR}Cash and Bank${PATH_SEPARATOR}Business Savings`],
      ['1130', 2, false, `Assets${PATH_SEPARATOR}Cash and Bank${PATH_SEPARATOR}Card Payments Clearing`],
      ['1200', 1, false, `Assets${PATH_SEPARATOR}Accounts Receivable`],
      ['1300', 1, false, `Assets${PATH_SEPARATOR}Prepaid Expenses`],
    ]);
    expect(tree.filter((node) => node.depth === 0).map((node) => node.name)).to.deep.equal(Object.values(STANDARD_CHART).map((top) => top.name));
    for (const node of tree) {
      const parent = tree.find((candidate) => candidate.id === node.parentId);
      expect(node.depth).to.equal(parent ? parent.depth + 1 : 0);
      if (parent) expect(tree.indexOf(parent)).to.be.lessThan(tree.indexOf(node));
    }
  });

  it('orders children under their parent even when codes would interleave them', () => {
    const business = buildBusiness(temp.db, clock);
    const assets = chartTree(temp.db, business.id).find((node) => node.code === '1000')!;
    // A top-level account whose code sorts between the asset leaves.
    temp.db
      .prepare(
        `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, created_at)
         VALUES ('00000000-0000-4000-8000-0000000000aa', ?, NULL, '1150', 'Odd Top', 'asset', 0, 0, '2026-03-15T12:00:00.000Z'),
                ('00000000-0000-4000-8000-0000000000ab', ?, ?, '1999', 'Late Child', 'asset', 0, 0, '2026-03-15T12:00:00.000Z')`,
      )
      .run(business.id, business.id, assets.id);
    const codes = chartTree(temp.db, business.id).map((node) => node.code);
    expect(codes.indexOf('1999')).to.be.lessThan(codes.indexOf('1150'));
    expect(codes.indexOf('1150')).to.be.lessThan(codes.indexOf('2000'));
    // The accounts list keeps its own order: by code.
    const listed = listPostableAccounts(temp.db, business.id).map((account) => account.code);
    expect(listed).to.deep.equal([...listed].sort());
  });

  it('fails loudly on a chart with a cycle', () => {
    const business = buildBusiness(temp.db, clock);
    const tree = chartTree(temp.db, business.id);
    const cash = tree.find((node) => node.code === '1100')!;
    const checking = tree.find((node) => node.code === '1110')!;
    temp.db.prepare('UPDATE ledger_accounts SET parent_id = ? WHERE id = ?').run(checking.id, cash.id);
    expect(() => chartTree(temp.db, business.id)).to.throw(/cycle/);
  });
});
