/** Why a backup or a restore was refused; the CLI branches on the code, never on the message. */
export type BackupRefusal =
  /** The file to restore does not exist, or is a folder. */
  | 'missing'
  /** The file does not start with SQLite's header. */
  | 'not_sqlite'
  /** integrity_check or foreign_key_check found a fault, or SQLite could not read the file. */
  | 'damaged'
  /** A SQLite database, but not Daybook's books (no migration history or no journal). */
  | 'not_daybook'
  /** Written by a newer Daybook: its schema has migrations this version does not know. */
  | 'newer_version'
  /** A write-ahead log lies beside the file: it is open in a server, or was copied while it was. */
  | 'file_in_use'
  /** The backup would be written over the books (or a file SQLite keeps beside them). */
  | 'same_as_books'
  /** A server holds the books file's lock. */
  | 'server_running'
  /** The books file exists and replacing it was not asked for. */
  | 'books_exist'
  /** Another process has the books file open. */
  | 'books_in_use';

export class BackupRefused extends Error {
  override name = 'BackupRefused';
  constructor(
    readonly code: BackupRefusal,
    message: string,
  ) {
    super(message);
  }
}
