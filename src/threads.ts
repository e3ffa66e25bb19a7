import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` that sits beside the module at `callerUrl`
 * (pass `import.meta.url`): the compiled JavaScript when Daybook runs as built, the TypeScript
 * source through tsx when it runs from its sources (tests, benchmarks, `npx tsx`). Worker code
 * is then a module like any other, type-checked and importing the same functions as the main
 * thread, never a string.
 */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSources = callerUrl.endsWith('.ts');
  const file = new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, callerUrl);
  // A worker takes the process's flags; from sources it needs tsx's loader among them.
  const execArgv = fromSources && !loadsTsx(process.execArgv) ? [...process.execArgv, '--import', 'tsx'] : process.execArgv;
  return new Worker(file, { ...options, execArgv });
}

function loadsTsx(execArgv: readonly string[]): boolean {
  return execArgv.some((flag, index) => flag === '--import=tsx' || (flag === '--import' && execArgv[index + 1] === 'tsx'));
}
