import { Argument, type Command } from 'commander';
import { JOB_NAMES } from '../store/job-runs.js';
import { action, handlersIn, type CliIo } from './context.js';

const HELP_AFTER_LIST = `
Each job's schedule (in UTC; DAYBOOK_JOB_<NAME>, "off" to disable), what its last run did and
when, and the next run the server has planned. A running server records every run in the
books, so this shows what it did. --json: {"serverRunning", "jobs": [{"name", "schedule",
"serverSchedule", "lastStartedAt", "lastFinishedAt", "lastOutcome", "lastDurationMs",
"lastResult", "lastError", "runs", "failures", "nextRunAt"}]}`;

const run = handlersIn(() => import('./actions/jobs.js'));

export function registerJobCommands(program: Command, io: CliIo): void {
  const group = program.command('jobs').description("the job pool: each job's schedule and last run, or run one now");
  group.command('list').description("each job's schedule, last run and next run").addHelpText('after', HELP_AFTER_LIST).action(action(io, run('list')));
  group
    .command('run')
    .description('run one job now, whatever its schedule (safe while a server runs)')
    .addArgument(new Argument('<name>', 'the job').choices(JOB_NAMES))
    .action(action(io, run('runNamed')));
}
