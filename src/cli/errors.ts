import { CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ServerLockError } from '../db/server-lock.js';
import { ApiError } from '../errors.js';
import { UNSAFE_TO_SHOW } from '../names.js';

/** Exit codes of the `daybook` command. */
export const EXIT_OK = 0;
export const EXIT_UNEXPECTED = 1;
export const EXIT_BAD_ARGUMENTS = 2;
/** A check the command ran found the books wrong (`daybook verify`). */
export const EXIT_CHECK_FAILED = 3;

/** A command was called wrongly in a way commander cannot see (e.g. `account set` with no change). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A check ran and found the books wrong; the command has said what on stderr already. */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
}

/** Whoever read standard output stopped reading (`| head`): the command ends quietly, like any Unix tool. */
export class OutputClosed extends Error {
  override name = 'OutputClosed';
}

/** The command could not do its work for a reason outside the books (a full disk, a job that failed): exit 1 with the reason, no "unexpected". */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}

/** Why a file (or standard output) could not be opened or written, in words. */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'ENOSPC') return 'the disk is full';
  return code ?? (error as Error).message;
}

/** Commander's own messages start with "error: "; ours carry the `daybook:` prefix instead. */
function commanderMessage(error: CommanderError, helpOnError: string): string {
  if (error.code === 'commander.help') {
    const usage = /^Usage: (.+)$/m.exec(helpOnError)?.[1];
    return usage ? `missing command (usage: ${usage}; add --help for the list)` : 'missing command (see daybook --help)';
  }
  return error.message.replace(/^error: /, '');
}

/** What the operator can act on: wrong arguments, a refusal from the books, a bad setting, a server already running. */
function isBadArguments(error: unknown): boolean {
  return (
    error instanceof CommanderError ||
    isNamed(error, UsageError, 'UsageError') ||
    isNamed(error, ApiError, 'ApiError') ||
    isNamed(error, ConfigError, 'ConfigError') ||
    isNamed(error, ServerLockError, 'ServerLockError')
  );
}

/**
 * By name as well as instanceof: each command's action module (and the server) is loaded on
 * demand, and a loader may hand that import a second copy of the modules it throws from.
 */
function isNamed(error: unknown, kind: abstract new (...args: never[]) => Error, name: string): error is Error {
  return error instanceof kind || (error instanceof Error && error.name === name);
}

/** One line, and nothing that acts on a terminal: a value echoed back could hold escapes (src/names.ts). */
function oneLine(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .replace(UNSAFE_TO_SHOW, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

export interface Failure {
  exitCode: number;
  /** The single stderr line, or null when nothing more should be said (help was shown). */
  line: string | null;
}

/**
 * Turns anything a command threw into an exit code and one stderr line. Bad arguments
 * (commander's checks, our own, and any ApiError from books) exit 2; anything else is a bug
 * or an environment failure and exits 1. Never a stack trace.
 */
export function describeFailure(error: unknown, helpOnError = ''): Failure {
  if (error instanceof CommanderError && error.exitCode === EXIT_OK) return { exitCode: EXIT_OK, line: null };
  if (isNamed(error, OutputClosed, 'OutputClosed')) return { exitCode: EXIT_OK, line: null };
  if (isNamed(error, CommandFailed, 'CommandFailed')) return { exitCode: EXIT_UNEXPECTED, line: `daybook: ${oneLine(error.message)}` };
  if (isNamed(error, CheckFailed, 'CheckFailed')) return { exitCode: EXIT_CHECK_FAILED, line: `daybook: ${oneLine(error.message)}` };
  if (isBadArguments(error)) {
    const message = error instanceof CommanderError ? commanderMessage(error, helpOnError) : (error as Error).message;
    return { exitCode: EXIT_BAD_ARGUMENTS, line: `daybook: ${oneLine(message)}` };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT_UNEXPECTED, line: `daybook: unexpected error: ${oneLine(message)}` };
}
