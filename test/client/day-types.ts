/** What the day's walk (day.ts) takes and finds; apart, so the test can name them while day.ts exists only with its generated types. */

export interface DayOptions {
  /** e.g. http://127.0.0.1:3000/api/v1 */
  baseUrl: string;
  key: string;
  /** The day the walk happens on, YYYY-MM-DD. */
  today: string;
  /** Puts the firm's bank statement into the review queue (`daybook import bank` on the server). */
  importStatement(businessId: string): Promise<void>;
}

export interface DayResult {
  businessName: string;
  invoiceNumber: string;
  invoiceStatus: string;
  balanceDueCents: string;
  expenseId: string;
  expenseTransactionId: string | null;
  acceptedItems: number;
  todaySignals: number;
  netIncomeCents: string;
  trialBalanceDebitsCents: string;
  trialBalanceCreditsCents: string;
  assetsCents: string;
  liabilitiesCents: string;
  equityCents: string;
  receivablesCurrentCents: string;
  payablesCurrentCents: string;
  transactionsSeen: number;
}
