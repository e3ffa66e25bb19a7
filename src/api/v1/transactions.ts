import { Type } from '@sinclair/typebox';
import {
  findTransaction,
  listTransactions as listRegister,
  type RecordedLine,
  TRANSACTION_SOURCES,
  TRANSACTION_STATUSES,
  type TransactionSummary,
} from '../../books/transactions.js';
import { notFound, validationFailed } from '../../errors.js';
import { pageRequestOf } from './paging.js';
import { defineRead } from '../../http/operation.js';
import { parseCents, usd } from '../../money.js';
import {
  CursorParam,
  DigitString,
  EntityId,
  IsoDate,
  LimitParam,
  Money,
  Nullable,
  SearchParam,
  Strict,
  StringEnum,
  Uuid,
} from '../schemas/common.js';

const transactionFields = {
  id: Uuid,
  date: IsoDate,
  amount: Money,
  vendor: Nullable(Type.String()),
  account: Nullable(Type.String({ description: 'account name' })),
  status: StringEnum(TRANSACTION_STATUSES),
  source: StringEnum(TRANSACTION_SOURCES),
};

export const TransactionSchema = Strict(transactionFields, { title: 'Transaction' });

export const RecordedLineSchema = Strict(
  { account: Type.String(), debit: Nullable(Money), credit: Nullable(Money) },
  { title: 'TransactionLine', description: 'one journal line of how the transaction was recorded, in the business\'s basis' },
);

export const TransactionDetailSchema = Strict(
  {
    ...transactionFields,
    description: Nullable(Type.String()),
    rationale: Nullable(Type.String()),
    lines: Type.Array(RecordedLineSchema),
  },
  { title: 'TransactionDetail' },
);

function presentSummary(transaction: TransactionSummary) {
  return {
    id: transaction.id,
    date: transaction.date,
    amount: usd(transaction.amountCents),
    vendor: transaction.vendor,
    account: transaction.account,
    status: transaction.status,
    source: transaction.source,
  };
}

function presentLine(line: RecordedLine) {
  const amount = usd(line.amountCents);
  return { account: line.account, debit: line.direction === 'debit' ? amount : null, credit: line.direction === 'credit' ? amount : null };
}

export const listTransactions = defineRead({
  id: 'transactions.list',
  method: 'GET',
  path: '/transactions',
  permission: 'transactions:read',
  summary: 'List the transactions of a business, newest first',
  description:
    'Newest first: by date, then by when it was recorded. Date and amount ranges are inclusive at both ends; text matches the vendor name only. Cursor-paged.',
  params: Strict({}),
  query: Strict({
    entityId: Type.Optional(EntityId),
    dateFrom: Type.Optional(IsoDate),
    dateTo: Type.Optional(IsoDate),
    vendorId: Type.Optional(Uuid),
    accountId: Type.Optional(Uuid),
    text: Type.Optional(SearchParam),
    status: Type.Optional(StringEnum(TRANSACTION_STATUSES)),
    minCents: Type.Optional(DigitString),
    maxCents: Type.Optional(DigitString),
    cursor: Type.Optional(CursorParam),
    limit: Type.Optional(LimitParam),
  }),
  body: Strict({}),
  responses: {
    200: { description: 'A page of transactions', schema: Strict({ transactions: Type.Array(TransactionSchema), nextCursor: Nullable(Type.String()) }) },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    const business = reached.business!;
    const minCents = query.minCents === undefined ? undefined : parseCents(query.minCents);
    const maxCents = query.maxCents === undefined ? undefined : parseCents(query.maxCents);
    if (query.dateFrom !== undefined && query.dateTo !== undefined && query.dateTo < query.dateFrom) {
      throw validationFailed('dateTo', 'must not be before dateFrom');
    }
    if (minCents !== undefined && maxCents !== undefined && maxCents < minCents) throw validationFailed('maxCents', 'must not be less than minCents');
    const page = listRegister(
      services.db,
      business.id,
      {
        dateFrom: query.dateFrom,
        dateTo: query.dateTo,
        vendorId: query.vendorId,
        accountId: query.accountId,
        text: query.text,
        status: query.status,
        minCents,
        maxCents,
      },
      pageRequestOf(query),
    );
    return { status: 200, body: { transactions: page.rows.map(presentSummary), nextCursor: page.nextCursor } };
  },
});

export const getTransaction = defineRead({
  id: 'transactions.get',
  method: 'GET',
  path: '/transactions/:id',
  permission: 'transactions:read',
  summary: 'Get one transaction and how it was recorded',
  description: 'The summary plus description, rationale and the journal lines of the business\'s basis; a transaction still in review has no lines yet.',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'The transaction', schema: TransactionDetailSchema } },
  errors: ['not_found'],
  scope: ({ params }) => ({ transaction: params.id }),
  handle({ services, params }) {
    const transaction = findTransaction(services.db, params.id);
    if (!transaction) throw notFound('transaction');
    return {
      status: 200,
      body: {
        ...presentSummary(transaction),
        description: transaction.description,
        rationale: transaction.rationale,
        lines: transaction.lines.map(presentLine),
      },
    };
  },
});
