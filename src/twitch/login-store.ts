/**
 * The Twitch logins the setup page saved (device code flow): the bot account's and, optionally,
 * the broadcaster's, in DATA_DIR/twitch-logins.jsonl (owner-only), written only through the disk
 * protocol (src/storage/disk.ts).
 *
 * Contract: the file is a journal of whole JSON lines `{"seq":n,"role":"bot","login":{...}}` (or
 * `{"seq":n,"role":"bot","removed":true}`); the last complete line of a role is its login, a torn
 * last line (a power cut mid-append) is ignored. `save` resolves only once its line is appended
 * AND data-synced: a renewed refresh token is durable before the caller drops the old one. The
 * append file is opened (and its directory synced) before any login is asked of Twitch
 * (`open` does it when a login exists; `prepare` before a first login), so what stands between
 * Twitch's answer and durability is one write and one fdatasync, nothing else (no rename, no
 * directory sync). The journal is compacted (rewritten whole by the protocol: temp, sync, rename,
 * directory sync) when it grows past `compactAfter` lines or when its last line is torn (before
 * anything is appended after it): a cut during compaction leaves the old or the new file, both
 * holding every role's newest login. Writes are serialised. Holds secrets: never logs them.
 * Does not: talk to Twitch, decide when to refresh (token.ts), or lock the directory.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { checkPrivate, nodeDisk, type AppendFile, type Disk } from '../storage/index.js';

const LOGINS_FILE = 'twitch-logins.jsonl';

/** Whose login: the bot account (chat, whispers) or the broadcaster's (channel APIs). */
export type TwitchRole = 'bot' | 'broadcaster';

const LoginSchema = z.object({
  login: z.string().min(1),
  userId: z.string().min(1),
  /** The application the tokens were issued to. */
  clientId: z.string().min(1),
  scopes: z.array(z.string()),
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  /** When the access token expires (ms since the epoch; 0: unknown). */
  expiresAt: z.number(),
  savedAt: z.string(),
});
export type SavedLogin = z.infer<typeof LoginSchema>;

const RoleSchema = z.enum(['bot', 'broadcaster']);
const LineSchema = z.union([
  z.object({ seq: z.number().int(), role: RoleSchema, login: LoginSchema }),
  z.object({ seq: z.number().int(), role: RoleSchema, removed: z.literal(true) }),
]);

export interface LoginStoreOptions {
  /** The disk protocol over a file system (tests: a power-cut model). Default: this machine's. */
  disk?: Disk;
  /** Rewrite the journal once it has more lines than this (default 64). */
  compactAfter?: number;
}

export class LoginStore {
  private readonly logins = new Map<TwitchRole, SavedLogin>();
  private handle: AppendFile | undefined;
  private seq = 0;
  private lines = 0;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly file: string,
    private readonly disk: Disk,
    private readonly compactAfter: number,
  ) {}

  /** Reads the saved logins of `dataDir` (creating nothing unless a torn journal must be rewritten). */
  static async open(dataDir: string, o: LoginStoreOptions = {}): Promise<LoginStore> {
    const disk = o.disk ?? nodeDisk;
    const store = new LoginStore(join(dataDir, LOGINS_FILE), disk, o.compactAfter ?? 64);
    const text = await disk.readText(store.file);
    if (text === undefined) return store;
    // A file another user could have planted or can read is not used (one line with the fix).
    if (disk === nodeDisk) await checkPrivate(store.file, 'the saved Twitch logins');
    let torn = false;
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let parsed: z.infer<typeof LineSchema>;
      try {
        parsed = LineSchema.parse(JSON.parse(raw));
      } catch {
        torn = true; // a line cut by a power cut (only the last can be): ignored
        continue;
      }
      store.lines++;
      store.seq = Math.max(store.seq, parsed.seq);
      if ('removed' in parsed) store.logins.delete(parsed.role);
      else store.logins.set(parsed.role, parsed.login);
    }
    if (torn || !text.endsWith('\n') || store.lines > store.compactAfter) await store.compact();
    else if (store.logins.size > 0) store.handle = await disk.openAppend(store.file);
    return store;
  }

  get(role: TwitchRole): SavedLogin | undefined {
    const l = this.logins.get(role);
    return l ? { ...l, scopes: [...l.scopes] } : undefined;
  }

  /** Opens the journal for appending (created 0600, its directory synced), so the next `save` is one write and one sync. */
  prepare(): Promise<void> {
    return this.serial(async () => {
      this.handle ??= await this.disk.openAppend(this.file);
    });
  }

  /** Saves `role`'s login durably (append + fdatasync); resolves once it would survive a power cut. */
  save(role: TwitchRole, login: SavedLogin): Promise<void> {
    const line = `${JSON.stringify({ seq: this.seq + 1, role, login })}\n`;
    this.seq++;
    return this.serial(async () => {
      this.handle ??= await this.disk.openAppend(this.file);
      await this.handle.append(Buffer.from(line, 'utf8'));
      await this.handle.datasync();
      this.logins.set(role, { ...login, scopes: [...login.scopes] });
      this.lines++;
      if (this.lines > this.compactAfter) await this.compact();
    });
  }

  /** Forgets `role`'s login (durably). */
  remove(role: TwitchRole): Promise<void> {
    if (!this.logins.has(role)) return Promise.resolve();
    const line = `${JSON.stringify({ seq: this.seq + 1, role, removed: true })}\n`;
    this.seq++;
    return this.serial(async () => {
      this.handle ??= await this.disk.openAppend(this.file);
      await this.handle.append(Buffer.from(line, 'utf8'));
      await this.handle.datasync();
      this.logins.delete(role);
      this.lines++;
    });
  }

  async close(): Promise<void> {
    await this.serial(async () => {
      await this.handle?.close();
      this.handle = undefined;
    });
  }

  /** Rewrites the journal with one line per saved login (whole-file protocol), then reopens it for appending. */
  private async compact(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    let seq = 0;
    const text = [...this.logins].map(([role, login]) => `${JSON.stringify({ seq: ++seq, role, login })}\n`).join('');
    await this.disk.writeAtomic(this.file, text);
    this.seq = seq;
    this.lines = this.logins.size;
    this.handle = await this.disk.openAppend(this.file);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
