/**
 * The public verification page of one draw: a single self-contained HTML document (no external
 * requests; a Content-Security-Policy forbids them) that re-checks the draw in the viewer's own
 * browser. Served at `GET /verify/<id>` (verify-route.ts) and written by
 * `npm run verify -- <id> --html`.
 *
 * Contract: `renderVerifyPage(record)` embeds only what the check needs (ids, logins and weights
 * of the frozen list, the draw's mode, status and failure reason (a draw nobody won says so and
 * why), whether its digest was announced, the fairness data, winners' logins and pick positions,
 * the reroll log, and, for a joint giveaway during Twitch Shared Chat, the entrants per channel
 * as plain escaped text);
 * never redeem links, gift ids, display names or supporter messages. The data sits in a JSON
 * script element with `<` escaped, and the script (verify-client.ts with @noble/curves)
 * is bundled with esbuild on first use and cached; the entry resolves next to this module, so it
 * works from the TypeScript sources (tsx) and from compiled JavaScript alike. The single
 * executable carries it prebuilt instead (`GIFTDROP_VERIFY_CLIENT`). Needs a record whose
 * seed is revealed (`pageProblem` says why not).
 */
import type { DrawRecord } from '../../giveaway/model.js';
import type { PageData } from './verify-client.js';
import { runSliced } from '../../fairness/steps.js';
import { escapeHtml } from '../../shared/html.js';
import { channelCountsText } from '../../giveaway/shared-chat-counts.js';
import { bundleScript, prebuiltOrBundled } from '../../shared/bundle-script.js';

/**
 * The script prebuilt at package time: scripts/package.mjs defines it (esbuild `define`) in the
 * single executable, which carries no bundler; undefined everywhere else.
 */
declare const GIFTDROP_VERIFY_CLIENT: string | undefined;

/**
 * Bundles the verify page's script for browsers with esbuild (`</script` escaped: the page
 * carries it inline).
 * @public scripts/package.mjs calls it (from dist/) to prebuild the script for the executable.
 */
export async function bundleVerifyClient(): Promise<string> {
  return (await bundleScript(import.meta.url, 'verify-client', 'browser')).replace(/<\/(script)/gi, '<\\/$1');
}

/** The verify page's script: the prebuilt one, or bundled on first use (cached for the process). */
const verifyScript = prebuiltOrBundled(
  typeof GIFTDROP_VERIFY_CLIENT === 'string' ? GIFTDROP_VERIFY_CLIENT : undefined,
  bundleVerifyClient,
);

/** Why `record` has no page yet, or undefined when it has one. */
export function pageProblem(record: DrawRecord): string | undefined {
  if (!record.fairness.seed) return `draw ${record.id} is ${record.status}: its seed is not revealed yet`;
  if (!record.frozenEntrants || !record.fairness.entrantsDigest) return `draw ${record.id} has no frozen entrant list`;
  return undefined;
}

/** The data the page checks (see the module contract for what is left out). */
function pageData(record: DrawRecord): PageData {
  const f = record.fairness;
  return {
    id: record.id,
    product: record.offer.name,
    status: record.status,
    ...(record.failure ? { failure: record.failure.reason } : {}),
    // The list's digest was said in chat only when the draw named a beacon round (beacon-step.ts):
    // a draw from the seed alone, or one whose round could not be saved, never announced it.
    digestAnnounced: !!f.beacon && (f.beacon as { round?: number }).round !== undefined,
    algorithm: f.algorithm,
    ...(record.mode ? { mode: record.mode } : {}),
    commitment: f.commitment,
    seed: f.seed ?? '',
    digest: f.entrantsDigest ?? '',
    ...(f.frozenAt ? { frozenAt: f.frozenAt } : {}),
    ...(f.beacon ? { beacon: structuredClone(f.beacon) } : {}),
    entrants: (record.frozenEntrants ?? []).map((e) => [e.userId, e.login, e.weight]),
    winners: record.winners.map((w) => ({ userId: w.userId, login: w.login, pick: w.pick })),
    rerolls: (record.rerolls ?? []).map((r) => ({
      replacedUserId: r.replacedUserId,
      replacedLogin: r.replacedLogin,
      ...(r.newUserId !== undefined ? { newUserId: r.newUserId } : {}),
      ...(r.pick !== undefined ? { pick: r.pick } : {}),
    })),
    ...(record.setAside?.length
      ? {
          setAside: record.setAside.map((a) => ({
            pick: a.pick,
            userId: a.userId,
            login: a.login,
            reason: a.reason,
            at: a.at,
          })),
        }
      : {}),
  };
}

/** Entrants per step of `pageJson` (a slice of the event loop runs several steps). */
const ENTRANTS_PER_STEP = 4096;

/**
 * `scriptJson(pageData(record))`, made in steps on the event loop (fairness/steps.ts `runSliced`):
 * the entrant list, the bulk of a big draw's page, is written a few thousand entrants at a time,
 * so a 100,000-entrant page never holds the loop (the /healthz next to a /verify flood).
 */
async function pageJson(record: DrawRecord): Promise<string> {
  const { entrants: _none, ...rest } = pageData({ ...record, frozenEntrants: [] });
  const frozen = record.frozenEntrants ?? [];
  const parts = await runSliced(
    (function* () {
      const out: string[] = [];
      for (let i = 0; i < frozen.length; i += ENTRANTS_PER_STEP) {
        const rows = frozen.slice(i, i + ENTRANTS_PER_STEP).map((e) => [e.userId, e.login, e.weight]);
        out.push(scriptJson(rows).slice(1, -1));
        yield;
      }
      return out;
    })(),
  );
  return `{"entrants":[${parts.join(',')}],${scriptJson(rest).slice(1)}`;
}

/** JSON safe inside a <script> element: `<`, U+2028 and U+2029 escaped. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// Words wrap between words (never inside one); only hashes and hex, set in .hex by the script,
// may break anywhere, since they have no word boundaries and would run off a phone's screen.
const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1f;overflow-wrap:break-word;word-break:normal;hyphens:manual}
h1{font-size:1.4rem}#status{font-weight:600;padding:.6rem .8rem;border-radius:.4rem;background:#eee}
.ok{color:#0a6b2d}.bad{color:#a1101b}#status.ok{background:#e3f6e8}#status.bad{background:#fbe4e6}
li{margin:.4rem 0}.hex{font:.85em ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem;text-align:left}
.note{color:#555;font-size:.9rem}`;

/** A joint giveaway's entrants per channel (Twitch Shared Chat, partner entries on); empty otherwise. */
function channelsSection(record: DrawRecord): string {
  const counts = record.entrantsByChannel;
  if (!counts?.length) return '';
  return `<h2>Entries by channel (Shared Chat)</h2><p id="channels">${escapeHtml(`${record.entrants} entrants: ${channelCountsText(counts)}`)}</p>\n`;
}

/** The whole page for `record` (its seed must be revealed). */
export async function renderVerifyPage(record: DrawRecord): Promise<string> {
  const problem = pageProblem(record);
  if (problem) throw new Error(problem);
  const script = await verifyScript();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>giftdrop draw check</title><style>${STYLE}</style></head>
<body data-verdict="pending">
<h1 id="title">giftdrop draw check</h1>
<p id="status">This page checks the draw with JavaScript in your browser; please enable it.</p>
<p class="note">Everything below is recomputed here, in your browser, from the draw's data embedded in this page: nothing else is fetched and no server is trusted (save the page to check it again offline).
The procedure is specified in giftdrop's src/fairness/procedure.ts.</p>
<h2>What was checked</h2><ol id="checks"></ol>
<h2>Winners recomputed here</h2><p id="computed-winners"></p>
${channelsSection(record)}<h2>Entrants (login, tickets)</h2><table><thead><tr><th>login</th><th>tickets</th></tr></thead><tbody id="entrants"></tbody></table>
<script type="application/json" id="draw-data">${await pageJson(record)}</script>
<script>${script}</script>
</body></html>
`;
}
