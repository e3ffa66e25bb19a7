import type { ThrowawayBooks } from '../db/throwaway-books.js';

/**
 * Throwaway books (daybook/testing, `serve --ephemeral`) removed however their process ends,
 * not only by close():
 * - it exits (process.exit, the event loop running dry): the 'exit' event;
 * - an uncaught exception or unhandled rejection ends it: Node emits no 'exit' then, but
 *   'uncaughtExceptionMonitor' runs first;
 * - SIGINT, SIGTERM or SIGHUP that nothing else listens for: the books go, then the signal is
 *   sent again with this listener gone, so the process ends as it would have (128 + signal).
 *   When something else listens (a test runner, `serve --ephemeral`'s graceful stop), that
 *   decides: the process goes on, or it exits and the 'exit' event removes them.
 * A fatal V8 error or SIGKILL runs no code at all: nothing can remove books then.
 * The process's listeners are there only while some books are, so a test process that closed
 * its servers is left as it was found.
 */

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const pending = new Set<() => void>();

/** The same books, whose remove() also stops watching for them; removed on exit if nothing did before. */
export function removedOnExit(books: ThrowawayBooks): ThrowawayBooks {
  const remove = (): void => {
    pending.delete(remove);
    if (pending.size === 0) stopWatching();
    books.remove();
  };
  if (pending.size === 0) startWatching();
  pending.add(remove);
  return { path: books.path, remove };
}

function removeAll(): void {
  for (const remove of [...pending]) {
    try {
      remove();
    } catch {
      // The process is ending: one folder that will not go must not keep the others.
    }
  }
}

const onExit = (): void => removeAll();

/** Only when the process will die of it: with an 'uncaughtException' listener it may go on serving. */
const onUncaught = (): void => {
  if (process.listenerCount('uncaughtException') === 0) removeAll();
};

/**
 * Marks this listener in every copy of this module a process has loaded (the package's build
 * and its sources, say), so that copies do not wait on each other as "something else".
 */
const OURS = Symbol.for('daybook.removedOnExit');

const onSignal = Object.assign(
  (signal: NodeJS.Signals): void => {
    if (process.listeners(signal).some((listener) => !(OURS in listener))) return;
    removeAll();
    // removeAll left no listener of ours, so the signal now does what it does by default.
    process.kill(process.pid, signal);
  },
  { [OURS]: true },
);

function startWatching(): void {
  process.on('exit', onExit);
  process.on('uncaughtExceptionMonitor', onUncaught);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function stopWatching(): void {
  process.off('exit', onExit);
  process.off('uncaughtExceptionMonitor', onUncaught);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
