/**
 * Fakes of the giveaway engine's ports (chat, shop, operator console, randomness) and a harness
 * that builds a GiveawayEngine over them with a ManualClock and the real FileDrawRepository in a
 * temp dir. The shop fake keeps draw state like Fourthwall does (winners per gift, one finish per
 * draw) and can be scripted to throw ShopError kinds, optionally after applying the call.
 */
import type { AccountGate } from '../../src/giveaway/account-rules.js';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/shared/clock.js';
import { noRoles, type ChatMessage, type ChatRoles } from '../../src/shared/chat.js';
import type { RandomSource } from '../../src/shared/random.js';
import { createLogger } from '../../src/logging/index.js';
import type {
  GiftDrawInfo,
  GiftPurchaseInfo,
  GiveawayLinkInfo,
  ProductInfo,
  StreamingInfo,
} from '../../src/giveaway/model.js';
import {
  ShopError,
  type ChatPort,
  type OperatorPort,
  type SayOptions,
  type ShopErrorKind,
  type ShopPort,
} from '../../src/giveaway/ports.js';
import { GiveawayEngine } from '../../src/giveaway/engine.js';
import { mergeGiveawaySettings, type GiveawaySettingsInput } from '../../src/giveaway/settings.js';
import { FileDrawRepository } from '../../src/storage/index.js';
import type { FileSystem } from '../../src/storage/disk.js';
import { LogCapture } from './log-capture.js';

export const START_MS = Date.UTC(2026, 0, 1, 20, 0, 0);

export class FakeChat implements ChatPort {
  readonly lines: { text: string; options: SayOptions | undefined }[] = [];
  readonly channelLogin = 'streamer';
  readonly botLogin = 'giftbot';
  say(text: string, options?: SayOptions): void {
    this.lines.push({ text, options });
  }
  channelId(): string | undefined {
    return '1000';
  }
  texts(): string[] {
    return this.lines.map((l) => l.text);
  }
  matching(re: RegExp): string[] {
    return this.texts().filter((t) => re.test(t));
  }
}

export class FakeOperator implements OperatorPort {
  readonly lines: { line: string; secret: boolean }[] = [];
  notify(line: string, opts?: { secret?: boolean }): void {
    this.lines.push({ line, secret: opts?.secret === true });
  }
}

/** Deterministic bytes: SHA-256 of a label and a counter, concatenated. */
export class CountingRandom implements RandomSource {
  private n = 0;
  constructor(private readonly label = 'giveaway-tests') {}
  bytes(n: number): Buffer {
    const out: Buffer[] = [];
    let len = 0;
    while (len < n) {
      const b = createHash('sha256').update(`${this.label}:${this.n++}`).digest();
      out.push(b);
      len += b.length;
    }
    return Buffer.concat(out).subarray(0, n);
  }
}

/** One scripted reaction of the fake shop: throw `error` (after applying the call when `applied`). */
export type ShopStep = 'ok' | { error: ShopErrorKind; applied?: boolean };

export class FakeShop implements ShopPort {
  readonly draws = new Map<string, GiftDrawInfo>();
  products: ProductInfo[] = [];
  domain = 'shop.example.test';
  entrySeconds: number | undefined;
  readonly calls: { op: string; args: unknown[] }[] = [];
  finishPlan: ShopStep[] = [];
  getPlan: ShopStep[] = [];
  linkPlan: ShopStep[] = [];
  /** When set, every finishDraw call without a planned step reacts like this. */
  finishDefault: ShopStep = 'ok';
  private linkSeq = 0;

  addDraw(opts: {
    id?: string;
    gifts?: number;
    durationSeconds?: number;
    createdAt?: number;
    type?: string;
    username?: string;
  }): GiftDrawInfo {
    const id = opts.id ?? `gdr_${this.draws.size + 1}`;
    const draw: GiftDrawInfo = {
      id,
      type: opts.type ?? 'INITIAL',
      giveawayId: `giv_${id}`,
      offer: { id: 'offer-1', name: 'Cozy Hoodie', slug: 'cozy-hoodie' },
      username: opts.username ?? 'generous_fan',
      gifts: Array.from({ length: opts.gifts ?? 1 }, (_, i) => ({ id: `gft_${id}_${i + 1}`, status: 'AVAILABLE' })),
      createdAt: new Date(opts.createdAt ?? START_MS).toISOString(),
      durationSeconds: opts.durationSeconds ?? 60,
    };
    this.draws.set(id, draw);
    return structuredClone(draw);
  }

  /** Applies winners to a draw as Fourthwall would (one per available gift, in order). */
  applyWinners(drawId: string, participants: { userId: string; userName: string }[]): GiftDrawInfo {
    const draw = this.draws.get(drawId);
    if (!draw) throw new ShopError('not-found', `draw ${drawId} not found`);
    if (draw.gifts.some((g) => g.winner)) throw new ShopError('already-finished', `draw ${drawId} already finished`);
    const available = draw.gifts.filter((g) => g.status === 'AVAILABLE');
    if (participants.length > available.length) throw new ShopError('rejected', 'more participants than gifts');
    participants.forEach((p, i) => {
      const gift = available[i]!;
      gift.winner = {
        username: p.userName,
        redeemUri: `https://fourthwall.com/gifts/${gift.id}`,
        selectedAt: new Date(START_MS).toISOString(),
      };
    });
    return structuredClone(draw);
  }

  private react<T>(step: ShopStep | undefined, apply: () => T): T {
    if (step === undefined || step === 'ok') return apply();
    if (step.applied) apply();
    throw new ShopError(step.error, `scripted ${step.error}`);
  }

  count(op: string): number {
    return this.calls.filter((c) => c.op === op).length;
  }

  async finishDraw(drawId: string, participants: { userId: string; userName: string }[]): Promise<GiftDrawInfo> {
    this.calls.push({ op: 'finishDraw', args: [drawId, structuredClone(participants)] });
    return this.react(this.finishPlan.shift() ?? this.finishDefault, () => this.applyWinners(drawId, participants));
  }

  async getDraw(drawId: string): Promise<GiftDrawInfo> {
    this.calls.push({ op: 'getDraw', args: [drawId] });
    return this.react(this.getPlan.shift(), () => {
      const d = this.draws.get(drawId);
      if (!d) throw new ShopError('not-found', `draw ${drawId} not found`);
      return structuredClone(d);
    });
  }

  async createGiveawayLinks(
    productId: string,
    count: number,
  ): Promise<{ packageId: string; links: GiveawayLinkInfo[] }> {
    this.calls.push({ op: 'createGiveawayLinks', args: [productId, count] });
    return this.react(this.linkPlan.shift(), () => {
      if (!this.products.some((p) => p.id === productId)) throw new ShopError('not-found', 'offer not found');
      const pkg = ++this.linkSeq;
      const created = {
        packageId: `gpg_${pkg}`,
        links: Array.from({ length: count }, (_, i) => ({
          id: `gft_link_${pkg}_${i + 1}`,
          link: `https://fourthwall.com/gifts/gft_link_${pkg}_${i + 1}`,
        })),
      };
      this.packages.set(created.packageId, { ...structuredClone(created), productId });
      return created;
    });
  }

  /** Packages created so far (createdAt is the fake's start time: it has no clock). */
  readonly packages = new Map<string, { packageId: string; productId: string; links: GiveawayLinkInfo[] }>();

  async listGiveawayPackages(): Promise<{ packageId: string; createdAt?: string }[]> {
    this.calls.push({ op: 'listGiveawayPackages', args: [] });
    return [...this.packages.keys()].map((packageId) => ({ packageId, createdAt: new Date(START_MS).toISOString() }));
  }

  async getGiveawayPackage(
    packageId: string,
  ): Promise<{ packageId: string; links: (GiveawayLinkInfo & { productId?: string })[] }> {
    this.calls.push({ op: 'getGiveawayPackage', args: [packageId] });
    const p = this.packages.get(packageId);
    if (!p) throw new ShopError('not-found', `package ${packageId} not found`);
    return { packageId, links: p.links.map((l) => ({ ...l, productId: p.productId })) };
  }

  async listProducts(): Promise<ProductInfo[]> {
    this.calls.push({ op: 'listProducts', args: [] });
    return structuredClone(this.products);
  }

  async getProduct(productId: string): Promise<ProductInfo> {
    this.calls.push({ op: 'getProduct', args: [productId] });
    const p = this.products.find((x) => x.id === productId);
    if (!p) throw new ShopError('not-found', 'product not found');
    return structuredClone(p);
  }

  async streamingStart(): Promise<StreamingInfo> {
    return { status: 'ONLINE' };
  }
  async streamingEnd(): Promise<StreamingInfo> {
    return { status: 'OFFLINE' };
  }
  async streamingStatus(): Promise<StreamingInfo> {
    return { status: 'UNKNOWN' };
  }
  async shopDomain(): Promise<string> {
    this.calls.push({ op: 'shopDomain', args: [] });
    return this.domain;
  }
  async giftingEntrySeconds(): Promise<number | undefined> {
    return this.entrySeconds;
  }
}

/** A chat message from `login` (user id `u-<login>` unless given). */
export function chatMsg(
  login: string,
  opts: { userId?: string; roles?: Partial<ChatRoles>; text?: string } = {},
): ChatMessage {
  return {
    id: randomUUID(),
    channel: 'streamer',
    channelId: '1000',
    userId: opts.userId ?? `u-${login}`,
    login,
    displayName: login.toUpperCase(),
    text: opts.text ?? '!enter',
    roles: { ...noRoles, ...opts.roles },
    bits: 0,
    action: false,
    sentAt: START_MS,
    self: false,
  };
}

export function purchase(id: string, gifts: number): GiftPurchaseInfo {
  return {
    id,
    friendlyId: 'FRIENDLY1',
    offer: { id: 'offer-2', name: 'Sticker Pack' },
    username: 'kind_supporter',
    quantity: gifts,
    gifts: Array.from({ length: gifts }, (_, i) => ({ id: `gft_${id}_${i + 1}`, status: 'AVAILABLE' })),
    createdAt: new Date(START_MS).toISOString(),
  };
}

export interface Harness {
  svc: GiveawayEngine;
  chat: FakeChat;
  shop: FakeShop;
  operator: FakeOperator;
  repo: FileDrawRepository;
  clock: ManualClock;
  logs: LogCapture;
  dir: string;
  /** Stops the service and closes the repository. */
  shutdown(): Promise<void>;
}

export interface HarnessOptions {
  settings?: GiveawaySettingsInput;
  dir?: string;
  clock?: ManualClock;
  shop?: FakeShop;
  random?: RandomSource;
  start?: boolean;
  /** Twitch account rules (the gate over an AccountInfoPort the test provides). */
  accounts?: AccountGate;
  /** The file system under the repository's disk protocol (power-cut tests); `dir` is a path in it. */
  fileSystem?: FileSystem;
}

export async function makeTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'giftdrop-giveaway-'));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** A service over fakes and a real repository in `dir` (a new temp dir unless given). */
export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = opts.dir ?? (await makeTempDir());
  const clock = opts.clock ?? new ManualClock(START_MS);
  const logs = new LogCapture();
  const logger = createLogger({ destination: logs, level: 'debug' });
  const repo = await FileDrawRepository.open(dir, {
    flushIntervalMs: 0,
    ...(opts.fileSystem ? { fileSystem: opts.fileSystem } : {}),
  });
  const chat = new FakeChat();
  const shop = opts.shop ?? new FakeShop();
  const operator = new FakeOperator();
  const svc = new GiveawayEngine({
    chat,
    shop,
    repo,
    clock,
    random: opts.random ?? new CountingRandom(dir),
    logger,
    settings: mergeGiveawaySettings(opts.settings),
    operator,
    ...(opts.accounts ? { accounts: opts.accounts } : {}),
  });
  if (opts.start !== false) await svc.start();
  return {
    svc,
    chat,
    shop,
    operator,
    repo,
    clock,
    logs,
    dir,
    async shutdown() {
      await svc.stop();
      await repo.close();
    },
  };
}

/** Waits (on real event-loop turns, not time) until `predicate` holds; fails after `limitMs`. */
export async function waitFor(predicate: () => boolean, what = 'condition', limitMs = 5000): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * Until `predicate` holds: waits for the engine to block on a clock timer (a retry backoff), then
 * moves the manual clock forward by `stepMs`. Time only moves while the engine waits on it.
 */
export async function driveUntil(
  clock: ManualClock,
  predicate: () => boolean,
  stepMs = 1000,
  maxSteps = 400,
): Promise<void> {
  for (let i = 0; i < maxSteps; i++) {
    await waitFor(() => predicate() || clock.pending() > 0, 'the engine to wait on the clock');
    if (predicate()) return;
    clock.advance(stepMs);
  }
  throw new Error('driveUntil: condition never held');
}

/** Every gift/giveaway link that appears in `text`. */
export function linksIn(text: string): string[] {
  return text.match(/https?:\/\/[^\s"',]*\/gifts\/[A-Za-z0-9_-]+/g) ?? [];
}
