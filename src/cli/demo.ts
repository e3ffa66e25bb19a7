import type { Command } from 'commander';
import { portNumber } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';
import { DEMO_DB_PATH, DEMO_HOST, DEMO_PORT } from './settings.js';

export { demoShellLine } from './settings.js';

const run = handlersIn(() => import('./actions/demo.js'));

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(`fresh demo books (${DEMO_DB_PATH} unless --db), a printed key, then serve on ${DEMO_HOST}`)
    .option('--port <n>', `port, 0 to 65535; 0 picks a free one (default: ${DEMO_PORT})`, portNumber)
    .option('--clock <date>', 'the demo\'s "now", fixed: a day (YYYY-MM-DD) or an ISO 8601 instant; the same clock gives the same books and answers (default: the system clock)')
    .option('--card-payments', 'connect the first business to a stand-in card processor on this machine, to try "Pay by card" on its pay pages (no money moves)')
    .action(action(io, run('demo')));
}
