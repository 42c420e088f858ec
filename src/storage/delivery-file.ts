/**
 * `<dataDir>/delivery.json`: how far each winner's prize got (announced, whispered, claim page
 * opened, redeemed or closed by the shop, reminded), keyed by draw id and winner user id. The delivery tracker
 * (src/delivery) is its only writer, through the repository's `updateDelivery`; the repository
 * attaches each winner's entry when records are read, so draw records themselves never carry it
 * (an engine save can never turn a redemption back). Written atomically (0600) on every change:
 * changes are rare (a handful per prize). A missing file is an empty one (histories from before
 * delivery was tracked); a damaged one is reported naming the file, like history.json.
 */
import { z } from 'zod';
import type { Delivery } from '../giveaway/model.js';
import type { Disk } from './disk.js';
import { parseJsonFile } from './files.js';

const deliverySchema = z.looseObject({
  announcedAt: z.string(),
  whisperedAt: z.string().optional(),
  claimPageOpenedAt: z.string().optional(),
  redeemedAt: z.string().optional(),
  orderFriendlyId: z.string().optional(),
  closedAt: z.string().optional(),
  closedAs: z.enum(['CANCELLED', 'CHANGED_TO_PROMOTION', 'CHANGED_TO_GIFT_CARD']).optional(),
  remindedAt: z.string().optional(),
  remindedBy: z.enum(['whisper', 'chat']).optional(),
  whisperProblem: z.string().optional(),
});

const fileSchema = z.object({
  version: z.literal(1),
  draws: z.record(z.string(), z.record(z.string(), deliverySchema)),
});

type DeliveryData = z.output<typeof fileSchema>;

export class DeliveryFile {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly disk: Disk,
    private readonly file: string,
    private readonly data: DeliveryData,
  ) {}

  /** Loads `file` (absent: empty). Throws STORAGE_CORRUPT naming the file when it is damaged. */
  static async load(disk: Disk, file: string): Promise<DeliveryFile> {
    const text = await disk.readText(file);
    const data = text === undefined ? { version: 1 as const, draws: {} } : parseJsonFile(file, text, fileSchema);
    return new DeliveryFile(disk, file, data);
  }

  /** A copy of one winner's state. */
  get(drawId: string, userId: string): Delivery | undefined {
    const d = this.data.draws[drawId]?.[userId];
    return d ? { ...d } : undefined;
  }

  /**
   * Merges `patch` into the winner's state (creating it when `patch` has `announcedAt`) and writes
   * the file durably. Returns the new state, or undefined when there is none to change.
   */
  update(drawId: string, userId: string, patch: Partial<Delivery>): Promise<Delivery | undefined> {
    const draw = (this.data.draws[drawId] ??= {});
    const current = draw[userId];
    if (!current && !patch.announcedAt) return Promise.resolve(undefined);
    const next = { ...current, ...patch } as Delivery;
    for (const k of Object.keys(next) as (keyof Delivery)[]) if (next[k] === undefined) delete next[k];
    draw[userId] = next as DeliveryData['draws'][string][string];
    const text = JSON.stringify(this.data, null, 1);
    const run = this.chain.then(() => this.disk.writeAtomic(this.file, text));
    this.chain = run.catch(() => undefined);
    return run.then(() => ({ ...next }));
  }

  /** Waits for pending writes. */
  flush(): Promise<void> {
    return this.chain;
  }
}
