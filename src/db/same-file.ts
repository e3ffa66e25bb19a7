import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Whether two paths name the same file, following symbolic links in their folders. A path
 * whose folder does not exist names no file that exists.
 */
export function sameFile(a: string, b: string): boolean {
  const canonical = (path: string) => {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return resolve(path);
    }
  };
  if (canonical(a) === canonical(b)) return true;
  // Two names of one file (a hard link, a bind mount) differ as paths but share an inode.
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
