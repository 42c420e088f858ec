/**
 * `npm run history -- [--json | --csv] [--limit N] [--draw ID]`: prints past draws from the local
 * history, newest first: a readable table by default, the contract's JSON export with --json, one
 * CSV row per winner with --csv; --draw shows one draw (in detail, in table mode).
 *
 * The logic is runHistoryCli (testable, returns the exit code: 0 ok, 1 unknown draw or unreadable
 * history, 2 bad arguments). The script entry takes the data directory from loadConfig(). Opens the
 * storage read-only, so it is safe to run beside the bot. Table output strips control characters
 * from shop- and user-supplied text; JSON and CSV carry it verbatim (properly escaped).
 */
import { localDateTime } from '../shared/time-text.js';
import { realpathSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { PRIZE_CLOSURE_WORDS, type DrawRecord } from '../giveaway/model.js';
import { FileDrawRepository, toCsv, toExport } from '../storage/index.js';
import { deliveryLabel, deliverySummary } from '../delivery/state.js';
import { commandLine, thisInvocation, type Invocation } from '../platform/invocation.js';
import { channelCountsText } from '../giveaway/shared-chat-counts.js';

/** Where a CLI reads and writes. */
export interface CliIo {
  dataDir: string;
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
}

/** The usage text, naming the commands as `inv` runs them. */
export function historyUsage(inv: Invocation = thisInvocation()): string {
  return `usage: ${commandLine(inv, 'history', '[--json | --csv] [--limit N] [--draw ID]')}
  (default)   a readable table, newest first
  --json      the history export (JSON array, newest first)
  --csv       one row per winner: draw id, kind, offer name, closedAt, winner fields, entrants by channel
  --limit N   only the N newest draws
  --draw ID   only the draw with this id
  --sandbox / --live   which mode's data (default: the mode ${commandLine(inv, 'start')} would run in)
`;
}

interface HistoryArgs {
  format: 'table' | 'json' | 'csv';
  limit?: number;
  draw?: string;
  help: boolean;
}

/** The arguments (node:util parseArgs, strict), or the one line saying what is wrong with them. */
function historyArgs(argv: readonly string[]): HistoryArgs | string {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        json: { type: 'boolean' },
        csv: { type: 'boolean' },
        limit: { type: 'string' },
        draw: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message.split('\n')[0]!; // e.g. "Unknown option '--bogus'"
  }
  if (values.json && values.csv) return '--json and --csv cannot be combined';
  const limit = values.limit;
  if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || !Number.isSafeInteger(Number(limit))))
    return '--limit needs a positive whole number';
  if (values.draw !== undefined && !values.draw) return '--draw needs a draw id';
  return {
    format: values.json ? 'json' : values.csv ? 'csv' : 'table',
    help: values.help ?? false,
    ...(limit !== undefined ? { limit: Number(limit) } : {}),
    ...(values.draw !== undefined ? { draw: values.draw } : {}),
  };
}

/** Removes control characters (terminal escapes included) from text shown in a table. */
function clean(text: string | undefined): string {
  return (text ?? '').replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** `9`, or with Shared Chat partner entries `9 (giftdrop_demo 3, partner_one 6)`. */
function entrantsText(r: DrawRecord): string {
  return r.entrantsByChannel?.length
    ? `${r.entrants} (${clean(channelCountsText(r.entrantsByChannel))})`
    : String(r.entrants);
}

function summaryTable(records: readonly DrawRecord[]): string {
  const rows = [['ID', 'KIND', 'STATUS', 'OPENED', 'ENTRANTS', 'WINNERS', 'DELIVERY', 'OFFER']];
  for (const r of records) {
    rows.push([
      clean(r.id),
      r.kind,
      r.status,
      localDateTime(clean(r.openedAt)),
      entrantsText(r),
      r.winners.length ? r.winners.map((w) => clean(w.login)).join(', ') : '-',
      deliverySummary(r),
      clean(r.offer.name),
    ]);
  }
  return table(rows);
}

/**
 * `redeemed; announced 2026-11-28 01:21:15, ..., redeemed 2026-11-28 01:25:02 (order ABC123)`:
 * the label, then each step's time; a prize only announced so far is its time alone (never
 * "announced: announced ...").
 */
function deliveryLine(d: NonNullable<DrawRecord['winners'][number]['delivery']>): string {
  const at = (t: string) => localDateTime(clean(t));
  const times = [
    `announced ${at(d.announcedAt)}`,
    d.whisperedAt && `whispered ${at(d.whisperedAt)}`,
    d.claimPageOpenedAt && `opened ${at(d.claimPageOpenedAt)}`,
    d.remindedAt && `reminded by ${d.remindedBy ?? '?'} ${at(d.remindedAt)}`,
    d.redeemedAt && `redeemed ${at(d.redeemedAt)}${d.orderFriendlyId ? ` (order ${clean(d.orderFriendlyId)})` : ''}`,
    d.closedAt && `${PRIZE_CLOSURE_WORDS[d.closedAs ?? 'CANCELLED']} ${at(d.closedAt)}`,
  ].filter(Boolean);
  const label = deliveryLabel(d);
  return label === 'announced' ? times.join(', ') : `${label}; ${times.join(', ')}`;
}

function detail(r: DrawRecord): string {
  const lines = [
    `draw       ${clean(r.id)}`,
    `kind       ${r.kind}`,
    `status     ${r.status}${r.failure ? ` (${clean(r.failure.reason)})` : ''}`,
    `offer      ${clean(r.offer.name)} (${clean(r.offer.id)})`,
    `gifts      ${r.gifts}`,
    `opened     ${localDateTime(clean(r.openedAt))}`,
    `closes     ${localDateTime(clean(r.closesAt))}`,
    `closed     ${r.closedAt ? localDateTime(clean(r.closedAt)) : '-'}`,
    `entrants   ${entrantsText(r)}`,
    `winners    ${r.winners.length ? '' : '-'}`,
    ...[...r.winners]
      .sort((a, b) => a.pick - b.pick)
      .map(
        (w) =>
          `  pick ${w.pick}: ${clean(w.displayName)} (${clean(w.login)}, id ${clean(w.userId)})` +
          `${w.giftId ? ` gift ${clean(w.giftId)}` : ''}${w.claimed === undefined ? '' : w.claimed ? ' claimed' : ' unclaimed'}` +
          `${w.accountCheck ? (w.accountCheck.result === 'checked' ? ' checked with Twitch' : ' not checked with Twitch (let in)') : ''}` +
          `${w.delivery ? `\n    delivery ${deliveryLine(w.delivery)}` : ''}` +
          `${w.redeemUrl ? `\n    link ${clean(w.redeemUrl)}` : ''}`,
      ),
    ...(r.setAside ?? []).map(
      (a) =>
        `  pick ${a.pick}: set aside ${clean(a.login)} (id ${clean(a.userId)}): ${a.reason}, Twitch answered ${localDateTime(clean(a.at))}`,
    ),
    ...(r.rerolls ?? []).map(
      (x) =>
        `  rerolled ${clean(x.replacedLogin)} (${x.reason}) at ${localDateTime(clean(x.at))}${x.pick === undefined ? '' : ` -> pick ${x.pick}`}` +
        // the link they had seen stays theirs (the replacement got a new one): its state is theirs
        `${x.kept ? `\n    kept their link${x.kept.giftId ? ` gift ${clean(x.kept.giftId)}` : ''}` : ''}` +
        `${x.kept && x.delivery ? `\n    delivery ${deliveryLine(x.delivery)}` : ''}` +
        `${x.kept?.redeemUrl ? `\n    link ${clean(x.kept.redeemUrl)}` : ''}`,
    ),
    `commitment ${clean(r.fairness.commitment)}`,
    `seed       ${clean(r.fairness.seed) || '(not revealed)'}`,
    `digest     ${clean(r.fairness.entrantsDigest) || '-'}`,
    `algorithm  ${clean(r.fairness.algorithm)}`,
  ];
  return lines.join('\n') + '\n';
}

/** Runs the history CLI with `argv` (arguments after the script name). Returns the exit code. */
export async function runHistoryCli(argv: readonly string[], io: CliIo): Promise<number> {
  const args = historyArgs(argv);
  if (typeof args === 'string') {
    io.err.write(`history: ${args}\n${historyUsage()}`);
    return 2;
  }
  if (args.help) {
    io.out.write(historyUsage());
    return 0;
  }
  let repo: FileDrawRepository;
  try {
    repo = await FileDrawRepository.open(io.dataDir, { readOnly: true });
  } catch (err) {
    io.err.write(`history: ${(err as Error).message}\n`);
    return 1;
  }
  for (const note of repo.notes) io.err.write(`history: warning: ${note}\n`);
  try {
    let records: DrawRecord[];
    if (args.draw !== undefined) {
      const one = await repo.getDraw(args.draw);
      if (!one) {
        io.err.write(`history: no draw with id ${JSON.stringify(args.draw)} in ${repo.historyFile}\n`);
        return 1;
      }
      records = [one];
    } else {
      records = await repo.listDraws({ limit: args.limit });
    }
    if (args.format === 'json') {
      io.out.write(JSON.stringify(records.map(toExport), null, 2) + '\n');
    } else if (args.format === 'csv') {
      io.out.write(toCsv(records));
    } else if (args.draw !== undefined) {
      io.out.write(detail(records[0]!));
    } else if (records.length === 0) {
      io.out.write(`no draws yet (${repo.historyFile})\n`);
    } else {
      io.out.write(summaryTable(records));
    }
    return 0;
  } catch (err) {
    io.err.write(`history: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await repo.close();
  }
}

/** Whether this module is the script being run (not imported). */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === moduleUrl;
  } catch {
    return false;
  }
}

/** `npm run history -- <args>` (and `giftdrop history <args>`): the data folder from the flags, then the listing; sets the exit code. */
export async function historyCommand(argv: readonly string[]): Promise<void> {
  // `npm run history -- --csv | head`: a reader that stops early is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const { cliDataDir } = await import('./data-location.js');
  const { dataDir, rest } = cliDataDir('history', argv);
  process.exitCode = await runHistoryCli(rest, {
    dataDir,
    out: process.stdout,
    err: process.stderr,
  });
}

if (isEntryPoint(import.meta.url)) void historyCommand(process.argv.slice(2));
