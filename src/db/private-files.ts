import { chmodSync, closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The modes of the files and folders Daybook makes: the owner's alone, whatever the process's
 * umask. The books, their backups and ledger exports hold the pay-link secret, the pay tokens in
 * the email outbox and every customer's details; under the common umask 022 SQLite and Node
 * would create them readable by every user of the machine.
 *
 * SQLite gives a -wal, -shm or -journal file it creates the mode of its main file, so a main file
 * made here before SQLite opens it covers those too. Folders and files that exist already are
 * never loosened or tightened behind the operator's back: a folder may be shared on purpose
 * (/srv, a mounted volume), so Daybook says so instead (exposureWarning).
 */

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_FOLDER_MODE = 0o700;
const PERMISSION_BITS = 0o777;
/** Any access at all by the group or by others. */
const GROUP_AND_OTHERS = 0o077;
/** Bytes per read when copying a file into a private one. */
const COPY_CHUNK_BYTES = 1024 * 1024;

/**
 * Creates `folder` and any missing folders above it, 0700. A folder that exists is left as it
 * is. The mode is set again after mkdir: mkdir applies the umask, which may take the owner's
 * own bits too (umask 0277).
 */
export function ensurePrivateFolder(folder: string): void {
  const target = resolve(folder);
  const firstCreated = mkdirSync(target, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  if (firstCreated === undefined) return;
  const top = resolve(firstCreated);
  for (let created = target; ; created = dirname(created)) {
    setModeWherePossible(statSync(created).mode, () => chmodSync(created, PRIVATE_FOLDER_MODE), PRIVATE_FOLDER_MODE);
    if (created === top) break;
    if (dirname(created) === created) throw new Error(`ensurePrivateFolder: ${top} is not above ${target}`);
  }
}

/**
 * Creates the file `path`, 0600, and returns it open for writing. Refuses (EEXIST) anything
 * already at `path`, a symbolic link included, so the file written is always the one made here.
 */
export function createPrivateFile(path: string): number {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
  try {
    setModeWherePossible(fstatSync(fd).mode, () => fchmodSync(fd, PRIVATE_FILE_MODE), PRIVATE_FILE_MODE);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * Sets a mode the umask left different. A file system without Unix modes (a FAT or SMB mount)
 * refuses to change them; Daybook still runs there, and the start-up warning names the books.
 */
function setModeWherePossible(current: number, apply: () => void, wanted: number): void {
  if ((current & PERMISSION_BITS) === wanted) return;
  try {
    apply();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
  }
}

/**
 * Makes an empty file, 0600, at `path` for SQLite to fill when nothing is there yet (SQLite reads
 * an empty file as an empty database). A file that exists is left as it is.
 */
export function ensurePrivateDatabaseFile(path: string): void {
  if (path === ':memory:') return;
  ensurePrivateFolder(dirname(path));
  try {
    closeSync(createPrivateFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Copies the file `from` to a new file `to`, 0600. Not copyFileSync: it gives the copy the
 * source's mode, and a backup copied around with the umask's 0644 would make the books 0644.
 */
export function copyToPrivateFile(from: string, to: string): void {
  const source = openSync(from, 'r');
  try {
    const target = createPrivateFile(to);
    try {
      const chunk = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
      for (let read = readSync(source, chunk); read > 0; read = readSync(source, chunk)) {
        for (let written = 0; written < read; ) written += writeSync(target, chunk, written, read - written);
      }
    } finally {
      closeSync(target);
    }
  } finally {
    closeSync(source);
  }
  const [copied, original] = [statSync(to).size, statSync(from).size];
  if (copied !== original) throw new Error(`copyToPrivateFile: ${to} has ${copied} bytes, ${from} ${original}`);
}

/**
 * Before `replacement` is renamed over `replaced`: gives it no permission that either file lacks,
 * so replacing books or a backup never opens up a file the owner had closed further (books made
 * 0600, or 0400, stay so). Nothing to do when `replaced` does not exist.
 */
export function keepStricterMode(replacement: string, replaced: string): void {
  let replacedMode: number;
  try {
    replacedMode = statSync(replaced).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const own = statSync(replacement).mode;
  const mode = own & replacedMode & PERMISSION_BITS;
  setModeWherePossible(own, () => chmodSync(replacement, mode), mode);
}

/**
 * One line for the operator when the file or folder at `path` is open to its group or to others,
 * else null (also when nothing is there: what Daybook creates there will be private). `what`
 * names it: "the books file", "the backup folder".
 */
export function exposureWarning(path: string, what: string): string | null {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    // Missing, or not ours to look at: the code that uses the path reports that.
    return null;
  }
  if ((stats.mode & GROUP_AND_OTHERS) === 0) return null;
  const closed = stats.isDirectory() ? PRIVATE_FOLDER_MODE : PRIVATE_FILE_MODE;
  return (
    `${what} ${path} is open to group or others (mode ${octal(stats.mode & PERMISSION_BITS)}); the books and their backups hold the pay-link secret. ` +
    `Daybook does not change permissions it did not set: close it with chmod ${closed.toString(8)} ${path}`
  );
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
