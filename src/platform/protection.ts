/**
 * Whether a data folder or secret file is protected from the other users of this computer, per
 * OS (contract "Links and logs": files under DATA_DIR are the owner's only).
 *
 * POSIX: the mode and owner say it. A path writable by the group or by everyone (another local user
 * could plant a token or change the history), or owned by another user, is refused with one line
 * naming the fix (platform/advice.ts). Windows: Node reports every writable file as mode 666 and
 * every folder as 777 (it does not map ACLs to modes) and has no uids; the user profile's ACLs are
 * what protect DATA_DIR there, so nothing is checked and nothing is said. A missing path is fine.
 * The platform is an argument so the Windows branch is tested on any OS.
 */
import { lstatSync, statSync, type Stats } from 'node:fs';
import { otherOwnerFix, ownerOnlyFix } from './advice.js';

/** True where file modes and owners say who may change a file (every OS but Windows). */
export function modesProtect(platform: NodeJS.Platform): boolean {
  return platform !== 'win32';
}

/**
 * Why `path` (`what`: "the data directory (DATA_DIR)", "the secret file", ...) must not be
 * trusted, as one line with the fix, or undefined when it is protected enough. `uid`: this
 * process's user id (POSIX).
 */
export function privacyProblem(
  path: string,
  what: string,
  platform: NodeJS.Platform,
  uid: number | undefined = process.getuid?.(),
): string | undefined {
  if (!modesProtect(platform)) return undefined;
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (st.isSymbolicLink()) {
    // A link's own mode says nothing (it is always 777): judge what it points to. A directory
    // behind a link is checked as itself; a secret file is never read through one.
    let target: Stats | undefined;
    try {
      target = statSync(path);
    } catch {
      target = undefined;
    }
    if (!target?.isDirectory())
      return `${what} ${path} is a symbolic link${target ? '' : ' to nothing'}: giftdrop does not read it through a link; put the file itself there (or delete the link to have a new one made)`;
    st = target;
  }
  if (uid !== undefined && st.uid !== uid)
    return `${what} ${path} belongs to another user (uid ${st.uid}, you are uid ${uid}): ${otherOwnerFix(path, uid)}`;
  if (st.mode & 0o022) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
    return `${what} ${path} can be changed by other users (mode ${mode}): ${ownerOnlyFix(path, st.isDirectory())}`;
  }
  return undefined;
}
