/**
 * The history export: maps stored DrawRecords to the public export shape of the contract
 * (`npm run history -- --json`) and to CSV (one row per winner). Pure functions; no I/O.
 * The JSON export includes winners' redeem links, as the contract specifies: it is meant for the
 * shop owner, not for chat. Extras beyond the contract: `mode` (every record carries it; older
 * records without it are live), `fairness.algorithm`, winners' `pick`, `accountCheck` and
 * `delivery` (the full delivery state, src/delivery), `rerolls`, `setAside`, `failure` and `rules`
 * when present, and `entrantsByChannel` (Shared Chat with partner entries on: the entrants per
 * channel; in CSV the last column, `login:count` pairs separated by spaces, a channel without a
 * known login by its id). Never exported: `pendingSeed` (an unrevealed seed),
 * the frozen entrant list, and internal bookkeeping (`finishInFlight`, `claim`, `giftIds`).
 */
import type { ChannelEntrants, Delivery, DrawRecord, RerollRecord, SetAsidePick } from '../giveaway/model.js';

/** One draw as exported by `npm run history -- --json`. */
export interface DrawExport {
  id: string;
  kind: DrawRecord['kind'];
  status: DrawRecord['status'];
  source: { drawId?: string; giveawayId?: string; packageId?: string; eventId?: string };
  offer: { id: string; name: string };
  gifts: number;
  openedAt: string;
  closesAt: string;
  closedAt?: string;
  entrants: number;
  /** Shared Chat with partner entries on: how many entrants came from each channel, this channel first. */
  entrantsByChannel?: ChannelEntrants[];
  winners: {
    userId: string;
    login: string;
    displayName: string;
    giftId?: string;
    redeemUrl?: string;
    claimed?: boolean;
    pick: number;
    /** How far the prize got (src/delivery); absent for winners from before it was tracked. */
    delivery?: Delivery;
  }[];
  fairness: {
    commitment: string;
    seed?: string;
    entrantsDigest?: string;
    algorithm: string;
    frozenAt?: string;
    beacon?: NonNullable<DrawRecord['fairness']['beacon']>;
  };
  /** Which mode's data it is (records from before modes were recorded: live). */
  mode: 'live' | 'sandbox';
  rerolls?: RerollRecord[];
  /** Picks the account rules set aside, in pick order. */
  setAside?: SetAsidePick[];
  failure?: { reason: string; at: string };
  rules?: Record<string, unknown>;
}

function defined<T extends object>(obj: T): T {
  for (const key of Object.keys(obj) as (keyof T)[]) if (obj[key] === undefined) delete obj[key];
  return obj;
}

/** The contract's export object for one record (undefined optional fields are omitted). */
export function toExport(record: DrawRecord): DrawExport {
  const s = record.source ?? {};
  return defined({
    id: record.id,
    kind: record.kind,
    status: record.status,
    source: defined({ drawId: s.drawId, giveawayId: s.giveawayId, packageId: s.packageId, eventId: s.eventId }),
    offer: { id: record.offer.id, name: record.offer.name },
    gifts: record.gifts,
    openedAt: record.openedAt,
    closesAt: record.closesAt,
    closedAt: record.closedAt,
    entrants: record.entrants,
    entrantsByChannel: record.entrantsByChannel?.map((c) => ({ ...c })),
    winners: record.winners.map((w) =>
      defined({
        userId: w.userId,
        login: w.login,
        displayName: w.displayName,
        giftId: w.giftId,
        redeemUrl: w.redeemUrl,
        claimed: w.claimed,
        pick: w.pick,
        delivery: w.delivery ? { ...w.delivery } : undefined,
        accountCheck: w.accountCheck ? { ...w.accountCheck } : undefined,
      }),
    ),
    fairness: defined({
      commitment: record.fairness.commitment,
      seed: record.fairness.seed,
      entrantsDigest: record.fairness.entrantsDigest,
      algorithm: record.fairness.algorithm,
      frozenAt: record.fairness.frozenAt,
      beacon: record.fairness.beacon ? structuredClone(record.fairness.beacon) : undefined,
    }),
    mode: record.mode ?? 'live',
    rerolls: record.rerolls?.length ? record.rerolls.map((r) => ({ ...r })) : undefined,
    setAside: record.setAside?.length ? record.setAside.map((a) => ({ ...a })) : undefined,
    failure: record.failure ? { ...record.failure } : undefined,
    rules: record.rules ? structuredClone(record.rules) : undefined,
  });
}

/** CSV columns, in order. */
const CSV_COLUMNS = [
  'drawId',
  'kind',
  'offerName',
  'closedAt',
  'userId',
  'login',
  'displayName',
  'giftId',
  'redeemUrl',
  'claimed',
  'entrantsByChannel',
] as const;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote, CR or LF, or leading/trailing
 * space; quotes doubled. Text starting with `=`, `+`, `-`, `@`, TAB or CR gets a leading `'` so
 * spreadsheets do not run it as a formula (offer and display names are not trusted). Control
 * characters (ESC, C1 controls such as CSI; TAB, CR and LF aside: quoted as RFC 4180 allows) and bidi overrides become U+FFFD, so
 * `history --csv` in a terminal cannot be made to move the cursor, recolour or hide text.
 */
export function csvCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  let text = String(value).replace(
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    '\ufffd',
  );
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `giftdrop_demo:3 partner_one:6` (a channel without a known login by its id); undefined without counts. */
function channelsCell(counts: readonly ChannelEntrants[] | undefined): string | undefined {
  return counts?.map((c) => `${c.login || c.channelId}:${c.entrants}`).join(' ');
}

/** One header row and one row per winner of each record (records without winners add no rows). CRLF line ends. */
export function toCsv(records: readonly DrawRecord[]): string {
  const rows: string[] = [CSV_COLUMNS.join(',')];
  for (const r of records) {
    for (const w of r.winners) {
      rows.push(
        [
          r.id,
          r.kind,
          r.offer.name,
          r.closedAt,
          w.userId,
          w.login,
          w.displayName,
          w.giftId,
          w.redeemUrl,
          w.claimed,
          channelsCell(r.entrantsByChannel),
        ]
          .map(csvCell)
          .join(','),
      );
    }
  }
  return rows.join('\r\n') + '\r\n';
}
