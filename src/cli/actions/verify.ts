import { getBusiness } from '../../books/businesses.js';
import { type BalanceMismatch, verifyBalances } from '../../books/reports/verify.js';
import { ApiError } from '../../errors.js';
import { type CommandContext, withBooks } from '../context.js';
import { CheckFailed, UsageError } from '../errors.js';

/** How many differences are written out; the count says how many there are in all. */
const SHOWN = 20;

const sums = (side: BalanceMismatch['stored']) => (side === null ? 'none' : `debits ${side.debitCents}, credits ${side.creditCents}`);

function describe(mismatch: BalanceMismatch): string {
  return `${mismatch.span} from ${mismatch.periodStart}, account ${mismatch.accountId}, basis ${mismatch.basis}: stored ${sums(mismatch.stored)}; lines ${sums(mismatch.fromLines)}`;
}

export async function verify(options: { business: string }, context: CommandContext): Promise<void> {
  const { name, check } = await withBooks(
    context,
    (db) => {
      let business;
      try {
        business = getBusiness(db, options.business);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_found') throw new UsageError(`no business with id ${options.business}`);
        throw error;
      }
      return { name: business.name, check: verifyBalances(db, business.id, SHOWN) };
    },
  );
  const summary = `${check.storedRows} stored balances of ${name} against ${check.lines} journal lines`;
  const result = { businessId: options.business, lines: check.lines, storedBalances: check.storedRows, mismatches: check.mismatchCount };
  if (check.mismatchCount === 0) {
    context.out.result(result, [`Checked ${summary}: all agree.`]);
    return;
  }
  // The differences go to stdout with --json (one object, as always), else one stderr line each.
  if (context.out.json) context.out.result({ ...result, differences: check.mismatches }, []);
  else for (const mismatch of check.mismatches) context.io.stderr(`daybook: ${describe(mismatch)}\n`);
  const more = check.mismatchCount > check.mismatches.length ? ` (the first ${check.mismatches.length} are listed)` : '';
  throw new CheckFailed(`${check.mismatchCount} stored balances disagree with the journal${more}; checked ${summary}`);
}

