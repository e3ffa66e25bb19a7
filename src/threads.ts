import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` that sits beside the module at `callerUrl`
 * (pass `import.meta.url`): the compiled JavaScript when Daybook runs as built, the TypeScript
 * source through tsx when it runs from its sources (tests, benchmarks, `npx tsx`). Worker code
 * is then a module like any other, type-checked and importing the same functions as the main
 * thread, never a string.
 */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSources = new URL(callerUrl).pathname.endsWith('.ts');
  const file = new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, callerUrl);
  // A worker inherits the process's flags by default. Passing them explicitly would refuse
  // per-process ones (--max-old-space-size, --title), so flags are given only when tsx's
  // loader must be added: from sources, and not already loaded (by `--import tsx` or the tsx
  // command, which names its loader by path). Resolved here, not from the working folder.
  const needsTsx = fromSources && !process.execArgv.some((flag) => /\btsx\b/.test(flag));
  return new Worker(file, needsTsx ? { ...options, execArgv: [...process.execArgv, '--import', import.meta.resolve('tsx')] } : options);
}
