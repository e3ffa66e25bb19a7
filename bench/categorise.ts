/**
 * How fast the categoriser builds and proposes: a business with a generated history of booked
 * payments (80 % of 5,000, by date), then every held-out payment proposed until at least
 * BENCH_PROPOSALS proposals (default 100,000) have been made. Prints build time and
 * proposals per second.
 */
import { performance } from 'node:perf_hooks';
import { createBusiness } from '../src/books/businesses.js';
import { categoriserFor } from '../src/books/categorise/index.js';
import { createTenant } from '../src/books/tenants.js';
import { fixedClock } from '../src/clock.js';
import { openDb } from '../src/db/connection.js';
import { CLI_ACTOR } from '../src/store/audit.js';
import { throwawayBooks } from '../src/db/throwaway-books.js';
import { generateExpenseHistory, insertExpenseHistory } from './support/expense-history.js';

const books = await throwawayBooks('daybook-bench-categorise-');
const db = openDb(books.path);
try {
  const clock = fixedClock('2026-03-15T12:00:00.000Z');
  const tenant = createTenant(db, clock, CLI_ACTOR, { name: 'Bench Firm', plan: 'large' });
  const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'Bench Business' });
  const history = generateExpenseHistory(20260315, 5000);
  const cutDate = history[Math.floor(history.length * 0.8)]!.date;
  const training = history.filter((expense) => expense.date < cutDate);
  const inputs = history
    .filter((expense) => expense.date >= cutDate)
    .map((expense) => ({ description: expense.description, vendorName: expense.vendorName, amountCents: expense.amountCents }));
  insertExpenseHistory(db, business, training);

  const buildStarted = performance.now();
  const categoriser = categoriserFor(db, business.id);
  const buildMs = performance.now() - buildStarted;

  const target = Number(process.env.BENCH_PROPOSALS ?? 100_000);
  let proposals = 0;
  const started = performance.now();
  while (proposals < target) {
    for (const input of inputs) categoriser.propose(input);
    proposals += inputs.length;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`categoriser built from ${training.length} booked payments in ${buildMs.toFixed(1)} ms`);
  console.log(`${proposals} proposals in ${(seconds * 1000).toFixed(0)} ms: ${Math.round(proposals / seconds).toLocaleString('en-US')} a second`);
} finally {
  db.close();
  books.remove();
}
