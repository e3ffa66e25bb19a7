import { Command } from 'commander';
import { registerTenantCommands } from './tenants.js';
import { registerAuditCommands } from './audit.js';
import { registerBackupCommands } from './backup.js';
import { registerBillCommands } from './bills.js';
import { registerBusinessCommands } from './businesses.js';
import { registerCustomerCommands } from './customers.js';
import { type CliIo, defaultIo } from './context.js';
import { registerDemoCommand } from './demo.js';
import { describeFailure, EXIT_OK } from './errors.js';
import { registerExportCommands } from './export.js';
import { registerImportCommands } from './import.js';
import { registerInvoiceCommands } from './invoices.js';
import { registerJobCommands } from './jobs.js';
import { registerKeyCommands } from './keys.js';
import { registerConsoleCommands } from './console.js';
import { registerLedgerAccountCommands } from './ledger-accounts.js';
import { registerMigrateCommand } from './migrate.js';
import { registerPeriodCommands } from './periods.js';
import { registerRateCommands } from './rates.js';
import { registerServeCommand } from './serve.js';
import { registerVendorCommands } from './vendors.js';
import { registerVerifyCommand } from './verify.js';

export type { CliIo } from './context.js';

/** Collects help that commander prints as an error (a group called without its command). */
interface HelpSink {
  text: string;
}

function buildProgram(io: CliIo, helpOnError: HelpSink): Command {
  // Settings made before .command() are inherited by every subcommand: commander never
  // exits the process, and its help goes through io.
  const program = new Command('daybook')
    .description('Daybook admin command: accounts, businesses, keys, period locks, rates, and the server')
    .option('--db <path>', 'SQLite books file (default: DAYBOOK_DB, else ./data/daybook.sqlite)')
    .option('--json', 'print exactly one JSON object on stdout')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => void (helpOnError.text += text),
      outputError: () => {},
    });
  registerServeCommand(program, io);
  registerMigrateCommand(program, io);
  registerDemoCommand(program, io);
  registerTenantCommands(program, io);
  registerBusinessCommands(program, io);
  registerKeyCommands(program, io);
  registerConsoleCommands(program, io);
  registerPeriodCommands(program, io);
  registerRateCommands(program, io);
  registerInvoiceCommands(program, io);
  registerImportCommands(program, io);
  registerExportCommands(program, io);
  registerBillCommands(program, io);
  registerVendorCommands(program, io);
  registerCustomerCommands(program, io);
  registerLedgerAccountCommands(program, io);
  registerVerifyCommand(program, io);
  registerBackupCommands(program, io);
  registerJobCommands(program, io);
  registerAuditCommands(program, io);
  return program;
}

/**
 * Runs the `daybook` command line on `argv` (process.argv form: node, script, args...) and
 * returns the exit code: 0 ok, 1 unexpected failure, 2 bad arguments. Never exits the process
 * itself and never prints a stack trace.
 */
export async function main(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const fullIo = defaultIo(io);
  const helpOnError: HelpSink = { text: '' };
  try {
    await buildProgram(fullIo, helpOnError).parseAsync(argv, { from: 'node' });
    return EXIT_OK;
  } catch (error) {
    const failure = describeFailure(error, helpOnError.text);
    if (failure.line !== null) fullIo.stderr(`${failure.line}\n`);
    return failure.exitCode;
  }
}
