import type { Command } from 'commander';
import { portNumber } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/serve.js'));

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('serve the API and run the jobs until SIGINT/SIGTERM (migrates first)')
    .option('--port <n>', 'port, 0 to 65535; 0 picks a free one (default: PORT, else config)', portNumber)
    .option('--host <host>', 'address to listen on (default: HOST, else config)')
    .option('--ephemeral', "throwaway books for another program's tests: prints {url, accountId, businesses, keys} as one JSON line, serves until stdin closes")
    .option('--clock <date>', 'with --ephemeral: the server\'s "now", a day (YYYY-MM-DD) or an ISO 8601 instant')
    .option('--control', 'with --ephemeral: serve /__daybook/clock, /__daybook/jobs/NAME, /__daybook/outbox and /__daybook/fail-next')
    .option('--fixture <file>', 'with --ephemeral: start from the books a JSON fixture describes, or "demo" for the demo\'s books')
    .action(action(io, run('serve')));
}
