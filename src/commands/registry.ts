/**
 * The command registry: maps `!name` (and aliases) to Command objects and runs them for chat
 * messages, enforcing each command's permission level and cooldowns.
 *
 * Contract: the prefix (default `!`) and names are configurable and matched case-insensitively;
 * arguments are split on any run of whitespace or invisible characters (zero-width spaces, the
 * U+E0000 tag chat clients append to dodge Twitch's duplicate rule); permissions are ordered
 * everyone < subscriber < vip < moderator < broadcaster (the broadcaster passes every level,
 * moderators pass vip and subscriber); cooldowns are kept per Twitch user id and per channel,
 * moderators and the broadcaster skip them unless `appliesToMods`; a command that throws or
 * rejects is logged and never crashes the caller. Unknown commands, missing permissions and
 * cooldowns are ignored silently (no chat reply: a flood must not make the bot talk). The
 * optional `admit` gate is asked before permissions for every message that names a command (the
 * bot passes the Shared Chat rule, giveaway/shared-chat.ts); a message it refuses runs nothing.
 * It does not know Twitch or the giveaway domain; replies go to the `reply` callback.
 */
import type { ChatMessage, ChatRoles } from '../shared/chat.js';
import type { Clock } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';
import type { Command, CommandContext, Permission } from './types.js';

/** Raised at registration when a name or alias is already taken, or a name is not one word. */
export class CommandConfigError extends GiftdropError {
  constructor(message: string) {
    super('COMMAND_CONFIG', message);
  }
}

export interface CommandRegistryOptions {
  clock: Clock;
  logger: Logger;
  /** Default `!`. */
  prefix?: string;
  /** Canonical name -> the name chat uses (e.g. `{ enter: 'join' }`). */
  names?: Readonly<Record<string, string | undefined>>;
  /** Canonical name -> aliases, replacing the command's own. */
  aliases?: Readonly<Record<string, readonly string[] | undefined>>;
  /** Whether `msg` may run the command registered as `canonical` at all (before permissions); default: always. */
  admit?: (msg: ChatMessage, canonical: string) => boolean;
}

/** What `describe()` lists for one command. */
export interface CommandInfo {
  canonical: string;
  name: string;
  aliases: string[];
  permission: Permission;
}

const RANK: Record<Permission, number> = { everyone: 0, subscriber: 1, vip: 2, moderator: 3, broadcaster: 4 };

/** True when a chatter with `roles` may use a command of level `permission`. */
export function hasPermission(roles: ChatRoles, permission: Permission): boolean {
  return RANK[permission] <= roleRank(roles);
}

function roleRank(roles: ChatRoles): number {
  if (roles.broadcaster) return RANK.broadcaster;
  if (roles.moderator) return RANK.moderator;
  if (roles.vip) return RANK.vip;
  if (roles.subscriber) return RANK.subscriber;
  return RANK.everyone;
}

// Whitespace plus the invisible characters chat clients insert (ZWSP/ZWNJ/ZWJ, word joiner,
// BOM, Mongolian vowel separator, combining grapheme joiner, U+E0000 tag).
const SEPARATORS = /[\s\u034f\u180e\u200b-\u200d\u2060\ufeff\u{E0000}]+/u;
const EDGES =
  /^[\s\u034f\u180e\u200b-\u200d\u2060\ufeff\u{E0000}]+|[\s\u034f\u180e\u200b-\u200d\u2060\ufeff\u{E0000}]+$/gu;

/** Splits a chat text on runs of whitespace/invisible characters; no empty items. */
export function parseArgs(text: string): string[] {
  const trimmed = text.replace(EDGES, '');
  return trimmed === '' ? [] : trimmed.split(SEPARATORS);
}

/** True when the character (or surrogate pair) at `i` is whitespace or an invisible separator. */
function isSeparatorAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c > 0x20 && c < 0x7f) return false;
  const ch = c >= 0xd800 && c <= 0xdbff ? text.slice(i, i + 2) : text[i]!;
  return SEPARATORS.test(ch);
}

/** When a command (or one of its subcommands with a cooldown of its own) last ran. */
interface CooldownTimes {
  lastGlobal: number;
  lastByUser: Map<string, number>;
  pruneAt: number;
}

interface Slot extends CooldownTimes {
  command: Command;
  canonical: string;
  name: string;
  aliases: string[];
  /** The subcommands listed in `cooldown.subcommands`, each on its own times (made on first use). */
  subcommands: Map<string, CooldownTimes>;
}

export class CommandRegistry {
  readonly prefix: string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly names: Readonly<Record<string, string | undefined>>;
  private readonly aliasOverrides: Readonly<Record<string, readonly string[] | undefined>>;
  private readonly admit: ((msg: ChatMessage, canonical: string) => boolean) | undefined;
  private readonly slots = new Map<string, Slot>();
  private readonly lookup = new Map<string, Slot>();
  /**
   * The last text without arguments that named a command, with what it resolved to: a flood
   * repeats one text (`!enter`), which is then matched by one string compare instead of being
   * cut, lower-cased and looked up again. Cleared whenever a name changes.
   */
  private hit: { text: string; slot: Slot; invokedAs: string; rest: string } | undefined;

  constructor(options: CommandRegistryOptions) {
    this.clock = options.clock;
    this.log = options.logger;
    this.prefix = options.prefix ?? '!';
    if (this.prefix.length === 0 || /\s/.test(this.prefix)) {
      throw new CommandConfigError('command prefix must be non-empty and contain no whitespace');
    }
    this.names = options.names ?? {};
    this.aliasOverrides = options.aliases ?? {};
    this.admit = options.admit;
  }

  /** Adds a command under its configured name and aliases. Throws CommandConfigError on a clash. */
  register(command: Command): this {
    const canonical = normalise(command.name);
    if (this.slots.has(canonical)) throw new CommandConfigError(`command "${canonical}" is registered twice`);
    const slot: Slot = {
      command,
      canonical,
      name: '',
      aliases: [],
      lastGlobal: -Infinity,
      lastByUser: new Map(),
      pruneAt: 1024,
      subcommands: new Map(),
    };
    this.slots.set(canonical, slot);
    try {
      this.bind(slot, this.names[canonical] ?? command.name, this.aliasOverrides[canonical] ?? command.aliases ?? []);
    } catch (err) {
      this.slots.delete(canonical);
      throw err;
    }
    return this;
  }

  /**
   * Gives the command registered as `canonical` a new chat name and, when given, new aliases
   * (otherwise it keeps its aliases). Throws CommandConfigError on a clash or unknown command.
   */
  rename(canonical: string, newName: string, aliases?: readonly string[]): void {
    const slot = this.slots.get(normalise(canonical));
    if (!slot) throw new CommandConfigError(`no command "${canonical}" to rename`);
    const previous = { name: slot.name, aliases: slot.aliases };
    this.unbind(slot);
    try {
      this.bind(slot, newName, aliases ?? previous.aliases);
    } catch (err) {
      this.bind(slot, previous.name, previous.aliases);
      throw err;
    }
  }

  /** The command chat reaches with `word` (a name or alias, any case, without prefix). */
  get(word: string): Command | undefined {
    return this.lookup.get(word.toLowerCase())?.command;
  }

  /** Every registered command with its current chat name and aliases. */
  describe(): CommandInfo[] {
    return [...this.slots.values()].map((s) => ({
      canonical: s.canonical,
      name: s.name,
      aliases: [...s.aliases],
      permission: s.command.permission,
    }));
  }

  /**
   * Runs the command `msg` invokes, if any. Returns true when a command ran (its promise, if
   * any, is not awaited; its failure is logged); false for plain chat, unknown commands,
   * missing permission and cooldowns.
   */
  handle(msg: ChatMessage, reply: (text: string) => void): boolean {
    const hit = this.hit !== undefined && msg.text === this.hit.text ? this.hit : this.resolve(msg.text);
    if (!hit) return false;
    const { slot, invokedAs, rest } = hit;
    const { command } = slot;
    if (this.admit && !this.admit(msg, slot.canonical)) {
      this.log.debug({ command: slot.canonical, userId: msg.userId }, 'command refused: not admitted (Shared Chat)');
      return false;
    }
    // (roles are read only for a command that needs more than everyone's rank)
    if (command.permission !== 'everyone' && !hasPermission(msg.roles, command.permission)) {
      this.log.debug({ command: slot.canonical, userId: msg.userId }, 'command refused: permission');
      return false;
    }
    if (
      command.cooldown &&
      !this.passCooldown(this.cooldownTimes(slot, rest), command.cooldown, msg, this.clock.now())
    ) {
      this.log.debug({ command: slot.canonical, userId: msg.userId }, 'command refused: cooldown');
      return false;
    }
    const ctx: CommandContext = {
      msg,
      invokedAs,
      args: rest === '' ? [] : rest.split(SEPARATORS),
      argText: rest,
      reply,
    };
    try {
      const result = command.execute(ctx);
      if (result && typeof result.then === 'function') {
        result.then(undefined, (err: unknown) => this.failed(slot, msg, err));
      }
    } catch (err) {
      this.failed(slot, msg, err);
    }
    return true;
  }

  /** The command a chat text names, with the name as typed and the trimmed rest; undefined for none. */
  private resolve(original: string): { text: string; slot: Slot; invokedAs: string; rest: string } | undefined {
    let text = original;
    if (!text.startsWith(this.prefix)) {
      text = text.replace(EDGES, '');
      if (!text.startsWith(this.prefix)) return undefined;
    }
    // The command word is looked up before any argument parsing: most chat is not a command.
    const start = this.prefix.length;
    let end = start;
    while (end < text.length && !isSeparatorAt(text, end)) end++;
    if (end === start) return undefined;
    const invokedAs = text.slice(start, end).toLowerCase();
    const slot = this.lookup.get(invokedAs);
    if (!slot) return undefined;
    const rest = end === text.length ? '' : text.slice(end).replace(EDGES, '');
    const found = { text: original, slot, invokedAs, rest };
    // Only a text without arguments is remembered (a flood's texts are those; texts with
    // arguments rarely repeat).
    if (rest === '') this.hit = found;
    return found;
  }

  /** The times a run of `slot` with arguments `rest` is counted on: its subcommand's own, or the command's. */
  private cooldownTimes(slot: Slot, rest: string): CooldownTimes {
    const own = slot.command.cooldown?.subcommands;
    if (!own?.length || rest === '') return slot;
    const word = rest.split(SEPARATORS, 1)[0]!.toLowerCase();
    if (!own.includes(word)) return slot;
    let times = slot.subcommands.get(word);
    if (!times) slot.subcommands.set(word, (times = { lastGlobal: -Infinity, lastByUser: new Map(), pruneAt: 1024 }));
    return times;
  }

  private passCooldown(
    slot: CooldownTimes,
    cd: NonNullable<Command['cooldown']>,
    msg: ChatMessage,
    now: number,
  ): boolean {
    const exempt = (msg.roles.moderator || msg.roles.broadcaster) && !cd.appliesToMods;
    if (exempt) return true;
    if (cd.globalMs && now - slot.lastGlobal < cd.globalMs) return false;
    if (cd.userMs) {
      const last = slot.lastByUser.get(msg.userId);
      if (last !== undefined && now - last < cd.userMs) return false;
      slot.lastByUser.set(msg.userId, now);
      if (slot.lastByUser.size >= slot.pruneAt) this.prune(slot, now, cd.userMs);
    }
    if (cd.globalMs) slot.lastGlobal = now;
    return true;
  }

  /** Forgets per-user cooldowns that have expired, so the map stays as small as the active chat. */
  private prune(slot: CooldownTimes, now: number, userMs: number): void {
    for (const [user, at] of slot.lastByUser) {
      if (now - at >= userMs) slot.lastByUser.delete(user);
    }
    slot.pruneAt = Math.max(1024, slot.lastByUser.size * 2);
  }

  private failed(slot: Slot, msg: ChatMessage, err: unknown): void {
    this.log.error({ err, command: slot.canonical, userId: msg.userId }, 'command failed');
  }

  private bind(slot: Slot, name: string, aliases: readonly string[]): void {
    const words = [normalise(name), ...aliases.map(normalise)].filter((w, i, all) => all.indexOf(w) === i);
    for (const w of words) {
      const owner = this.lookup.get(w);
      if (owner && owner !== slot) {
        throw new CommandConfigError(`"${this.prefix}${w}" is already used by command "${owner.canonical}"`);
      }
    }
    slot.name = words[0]!;
    slot.aliases = words.slice(1);
    for (const w of words) this.lookup.set(w, slot);
    this.hit = undefined;
  }

  private unbind(slot: Slot): void {
    for (const w of [slot.name, ...slot.aliases]) {
      if (this.lookup.get(w) === slot) this.lookup.delete(w);
    }
    this.hit = undefined;
  }
}

function normalise(word: string): string {
  const w = word.trim().toLowerCase();
  if (w === '' || SEPARATORS.test(w)) throw new CommandConfigError(`command name "${word}" must be one word`);
  return w;
}
