/**
 * `npm run verify -- <id>`: recomputes a stored draw's winners from its revealed seed and frozen
 * entrant list (src/fairness/verify.ts; the procedure is documented in src/fairness/procedure.ts)
 * and says whether the history matches. Exit 0 when it does (with a short explanation), 1 when it
 * does not or the id is unknown (with the reason), 2 on bad arguments, 3 when there is nothing to
 * check (a giveaway cancelled before its draw, or a draw still open). Read-only.
 */
import { FileDrawRepository } from '../storage/index.js';
import { verifyDraw } from '../fairness/verify.js';
import { FAIRNESS_ALGORITHM_V2 } from '../fairness/index.js';
import type { DrawRecord } from '../giveaway/model.js';
import { isEntryPoint, type CliIo } from './history.js';
import { pageProblem, renderVerifyPage } from '../web/public/verify-page.js';
import { commandLine, thisInvocation, type Invocation } from '../platform/invocation.js';

/** The usage text, naming the commands as `inv` runs them. */
export function verifyUsage(inv: Invocation = thisInvocation()): string {
  return `usage: ${commandLine(inv, 'verify', '[--sandbox | --live] <draw id> [--html]')}
  Recomputes the draw's winners from its revealed seed, entrant list and public beacon round
  (the procedure is in giftdrop's source, src/fairness/procedure.ts). Exit 0 when they match the
  history, 1 when they do not, 3 when there is nothing to check yet (cancelled before the draw, or
  still open).
  --html  writes a self-contained verification page to stdout (${commandLine(inv, 'verify', '<id> --html', { silent: true })} > draw.html)
          that re-checks everything in the viewer's own browser; the verdict goes to stderr.
  --sandbox / --live   which mode's data (default: the mode ${commandLine(inv, 'start')} would run in)
`;
}

/** Exit code for a draw that has nothing to check yet (or ever): not a failure, not a pass. */
export const NOTHING_TO_VERIFY = 3;

/** Why a draw has no picks to check (cancelled, or not drawn yet), or undefined when it has. */
function nothingToVerify(record: DrawRecord): string | undefined {
  if (record.status === 'cancelled' && record.winners.length === 0) {
    return 'was cancelled before anyone was drawn: there were no picks, so there is nothing to verify (not a failure).';
  }
  if ((record.status === 'open' || record.status === 'drawing') && !record.fairness.seed) {
    return `is still ${record.status}: its winners are not drawn yet. Run verify again once it has finished.`;
  }
  return undefined;
}

/** The beacon line(s) of the explanation. */
function beaconLines(record: DrawRecord): string[] {
  const b = record.fairness.beacon;
  if (!b) return [];
  if ('unavailable' in b)
    return [`  beacon      round ${b.round ?? '?'} was not reachable in time: drawn from the seed alone`];
  const kind = b.sandbox ? 'SANDBOX beacon (local key, not drand)' : 'drand quicknet';
  return [
    `  beacon      ${kind} round ${b.round}: BLS signature valid, first round after the list was frozen at ${record.fairness.frozenAt}`,
  ];
}

/** `--html`: the page to stdout, the verdict to stderr; exit 0 only when the draw verifies here too. */
async function writePage(record: DrawRecord, result: ReturnType<typeof verifyDraw>, io: CliIo): Promise<number> {
  const problem = pageProblem(record);
  if (problem) {
    io.err.write(`verify: ${problem}\n`);
    return NOTHING_TO_VERIFY;
  }
  io.out.write(await renderVerifyPage(record));
  io.err.write(
    result.ok
      ? `draw ${record.id} verifies; page written (open it in any browser, or post it: it re-checks everything itself).\n`
      : `verify: draw ${record.id} does NOT verify: ${result.reason} (the page shows the same failure)\n`,
  );
  return result.ok ? 0 : 1;
}

/** Runs the verify CLI with `argv` (arguments after the script name). Returns the exit code. */
export async function runVerifyCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.out.write(verifyUsage());
    return 0;
  }
  const html = argv.includes('--html');
  const args = argv.filter((a) => a !== '--html');
  if (args.length !== 1 || args[0]!.startsWith('-') || args[0]!.length === 0) {
    io.err.write(`verify: expected exactly one draw id (and optionally --html)\n${verifyUsage()}`);
    return 2;
  }
  const id = args[0]!;
  let repo: FileDrawRepository | undefined;
  try {
    repo = await FileDrawRepository.open(io.dataDir, { readOnly: true });
    for (const note of repo.notes) io.err.write(`verify: warning: ${note}\n`);
    const record = await repo.getDraw(id);
    if (!record) {
      io.err.write(`verify: no draw with id ${JSON.stringify(id)} in ${repo.historyFile}\n`);
      return 1;
    }
    const nothing = nothingToVerify(record);
    if (nothing) {
      io.out.write(`draw ${id}: ${nothing}\n`);
      return NOTHING_TO_VERIFY;
    }
    const result = verifyDraw(record);
    if (html) return await writePage(record, result, io);
    if (!result.ok) {
      io.err.write(`verify: draw ${id} does NOT verify: ${result.reason}\n`);
      return 1;
    }
    const f = record.fairness;
    // A draw nobody won (a gift draw handed back): said first, with why; no pick stands.
    const nobody = record.winners.length === 0 && !record.rerolls?.length;
    const lines = [
      nobody
        ? `draw ${id}: nobody won${record.failure ? ` (${record.failure.reason})` : ''}; its seed and entrant list verify.`
        : `draw ${id} verifies: its winners follow from the revealed seed${f.algorithm === FAIRNESS_ALGORITHM_V2 ? ' and the public beacon round' : ''}.`,
      `  commitment  SHA-256(seed) = ${f.commitment}, as announced when entries opened (the draw code ${f.commitment.slice(0, 16)} in chat)`,
      `  entrants    ${record.frozenEntrants?.length ?? 0} frozen entrants, digest ${f.entrantsDigest}`,
      ...beaconLines(record),
      `  picks       ${record.winners.length + (record.rerolls?.length ?? 0) + (record.setAside?.length ?? 0)} taken from ${f.algorithm} with seed ${f.seed}`,
      `  winners     ${result.winners.length ? result.winners.join(', ') : '(none)'}`,
    ];
    const aside = record.setAside ?? [];
    if (aside.length) {
      lines.push(`  set aside   ${aside.length} pick(s) the account rules skipped (Twitch's answers as recorded):`);
      for (const a of aside)
        lines.push(`              pick ${a.pick}: ${a.login} (${a.userId}) ${a.reason}, answered ${a.at}`);
    }
    if (record.rerolls?.length) {
      lines.push(`  rerolled    ${record.rerolls.map((r) => r.replacedLogin).join(', ')} (replaced by the next picks)`);
    }
    io.out.write(lines.join('\n') + '\n');
    return 0;
  } catch (err) {
    io.err.write(`verify: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await repo?.close();
  }
}

/** `npm run verify -- <args>` (and `giftdrop verify <args>`): the data folder from the flags, then the check; sets the exit code. */
export async function verifyCommand(argv: readonly string[]): Promise<void> {
  const { cliDataDir } = await import('./data-location.js');
  const { dataDir, rest } = cliDataDir('verify', argv);
  process.exitCode = await runVerifyCli(rest, {
    dataDir,
    out: process.stdout,
    err: process.stderr,
  });
}

if (isEntryPoint(import.meta.url)) void verifyCommand(process.argv.slice(2));
