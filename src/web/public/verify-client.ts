/**
 * The verify page's script, run in the VIEWER's browser (bundled with @noble/curves by
 * verify-page.ts; no network, no server trust). It re-derives everything from the draw data
 * embedded in the page and shows, check by check, what holds:
 *   1. commitment: SHA-256(seed) equals the commitment announced at open as the draw code (its
 *      first 16 hex digits, fairness/procedure.ts step 1; WebCrypto);
 *   2. entrant list: canonical order and serialization, SHA-256 equals the recorded digest (said
 *      in chat as the list code only when the draw named a beacon round: `digestAnnounced`);
 *   3. beacon (v2): a live draw does not rest on a sandbox beacon (the same rule and words as
 *      `npm run verify`, src/fairness/beacon-policy.ts), the round's BLS signature against the
 *      chain's public key (quicknet pinned), randomness = SHA-256(signature), and the round is
 *      the first published after the freeze;
 *   4. picks: the draw key (v2: HMAC-SHA256 over seed, digest, round, randomness; v1: the seed),
 *      the HMAC-SHA256 counter stream, rejection sampling and weighted picks without replacement
 *      (the procedure in src/fairness/procedure.ts, implemented again here), compared with the
 *      announced winners, the picks the account rules set aside (each named with its reason and
 *      the time of Twitch's answer) and the reroll log.
 * A draw nobody won (no winners: a gift draw handed back, nobody eligible) says so plainly, with
 * why, in the verdict line and the winners check; it claims nothing chat never showed.
 * It writes its verdict to `document.body.dataset.verdict` ('verified' | 'failed'), whether
 * anybody won to `dataset.outcome` ('winners' | 'nobody') and the recomputed winners to
 * #computed-winners (for the page's own tests). Text from the draw (logins,
 * product) is only ever set through textContent.
 */
import { beaconModeProblem } from '../../fairness/beacon-policy.js';
import {
  QUICKNET,
  chainHashOf,
  randomnessOf,
  roundAfter,
  roundTimeMs,
  verifyRoundSignature,
  type DrandChain,
} from '../../fairness/drand.js';

/** The draw data embedded in the page (see verify-page.ts `pageData`). */
export interface PageData {
  id: string;
  product: string;
  /** The draw's status in the history (absent in pages written before it was embedded). */
  status?: 'open' | 'drawing' | 'finished' | 'cancelled' | 'failed';
  /** Why a failed draw failed (e.g. too few eligible entrants: nobody won). */
  failure?: string;
  /** True when chat was told the list code at close (only draws that named a beacon round). */
  digestAnnounced?: boolean;
  algorithm: string;
  /** The mode that wrote the draw (records from before modes were recorded read as live). */
  mode?: 'live' | 'sandbox';
  commitment: string;
  seed: string;
  digest: string;
  frozenAt?: string;
  beacon?:
    | {
        chain: string;
        round: number;
        randomness?: string;
        signature?: string;
        sandbox?: { publicKey: string; genesis: number; period: number };
      }
    | { unavailable: true; chain?: string; round?: number };
  /** [userId, login, weight] */
  entrants: [string, string, number][];
  winners: { userId: string; login: string; pick: number }[];
  rerolls: { replacedUserId: string; replacedLogin: string; newUserId?: string; pick?: number }[];
  /** Picks the account rules set aside (absent: none, or an older draw). */
  setAside?: { pick: number; userId: string; login: string; reason: string; at: string }[];
}

interface El {
  textContent: string | null;
  className: string;
  appendChild(child: El): El;
  setAttribute(name: string, value: string): void;
}
interface Doc {
  getElementById(id: string): El | null;
  createElement(tag: string): El;
  body: El & { dataset: Record<string, string> };
}

const V2 = 'giftdrop-hmac-sha256-drand-v2';
/** Hex digits of a commitment or digest chat shows (fairness/procedure.ts CODE_HEX_DIGITS). */
const CODE = 16;

/** `1 entrant`, `2 entrants`, `0 picks`. */
function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
const V1 = 'giftdrop-hmac-sha256-v1';
const enc = new TextEncoder();

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}
async function sha256Hex(data: Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', data));
}
async function hmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, message));
}
function u64(n: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
}
function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The HMAC-SHA256 counter-mode byte stream (fairness/procedure.ts step 4). */
class Stream {
  private block: Uint8Array = new Uint8Array(0);
  private offset = 0;
  private counter = 0;
  constructor(
    private readonly key: Uint8Array,
    private readonly digest: Uint8Array,
  ) {}
  async next(): Promise<number> {
    if (this.offset >= this.block.length) {
      this.block = await hmac(this.key, concat(this.digest, u64(this.counter++)));
      this.offset = 0;
    }
    return this.block[this.offset++]!;
  }
}

/** Uniform integer in [0, n) by masked rejection sampling (fairness/procedure.ts step 5). */
async function uniformBelow(s: Stream, n: number): Promise<number> {
  if (n === 1) return 0;
  const bits = (n - 1).toString(2).length;
  const bytes = Math.ceil(bits / 8);
  const mask = (1 << (bits - 8 * (bytes - 1))) - 1;
  for (;;) {
    let v = (await s.next()) & mask;
    for (let i = 1; i < bytes; i++) v = v * 256 + (await s.next());
    if (v < n) return v;
  }
}

/** The first `count` picks as indices into the canonical list (fairness/procedure.ts step 6). */
async function picks(key: Uint8Array, digestHex: string, weights: number[], count: number): Promise<number[]> {
  const stream = new Stream(key, hexToBytes(digestHex));
  const taken = new Array<boolean>(weights.length).fill(false);
  let total = weights.reduce((a, b) => a + b, 0);
  const out: number[] = [];
  while (out.length < Math.min(count, weights.length)) {
    const r = await uniformBelow(stream, total);
    let acc = 0;
    for (let i = 0; i < weights.length; i++) {
      if (taken[i]) continue;
      acc += weights[i]!;
      if (acc > r) {
        taken[i] = true;
        total -= weights[i]!;
        out.push(i);
        break;
      }
    }
  }
  return out;
}

interface Check {
  ok: boolean;
  title: string;
  detail: string;
}

/** The beacon check's title: a sandbox draw's beacon is the sandbox's own local test key, not a public one. */
function beaconTitle(b: PageData['beacon']): string {
  return b && !('unavailable' in b) && b.sandbox ? "Sandbox's local beacon" : 'Public beacon';
}

/**
 * When Twitch gave the answer a set-aside pick rests on. An answer from while entries were open
 * (looked up ahead and kept for the close) is older than the freeze: said so, with both times.
 */
function answered(at: string, frozenAt: string | undefined): string {
  if (frozenAt && Date.parse(at) < Date.parse(frozenAt)) {
    return `Twitch answered at ${at}, while entries were open; the rule was applied to that answer when the list was frozen at ${frozenAt}`;
  }
  return `Twitch answered at ${at}`;
}

/** Runs every check on `d`; returns the checks and the recomputed current winners (logins). */
async function verifyPageData(d: PageData): Promise<{ checks: Check[]; winners: string[] }> {
  const checks: Check[] = [];
  const add = (ok: boolean, title: string, detail: string) => (checks.push({ ok, title, detail }), ok);
  if (!add(d.algorithm === V1 || d.algorithm === V2, 'Procedure', `${d.algorithm}`)) return { checks, winners: [] };
  const seed = /^[0-9a-f]{64}$/.test(d.seed) ? hexToBytes(d.seed) : undefined;
  add(
    !!seed && (await sha256Hex(seed)) === d.commitment,
    'Commitment',
    `SHA-256(seed) = ${seed ? await sha256Hex(seed) : '(no seed)'}; committed at open: ${d.commitment} (announced in chat as the draw code ${d.commitment.slice(0, CODE)})`,
  );

  const sorted = [...d.entrants].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const wellFormed = sorted.every(
    ([id, login, w], i) =>
      id &&
      login &&
      !/[\t\r\n]/.test(id + login) &&
      Number.isSafeInteger(w) &&
      w > 0 &&
      (i === 0 || sorted[i - 1]![0] !== id),
  );
  const text = sorted.map(([id, login, w]) => `${id}\t${login}\t${w}\n`).join('');
  const digest = await sha256Hex(enc.encode(text));
  const recorded = d.digestAnnounced
    ? `announced at close: ${d.digest} (in chat as the list code ${d.digest.slice(0, CODE)})`
    : `recorded at close: ${d.digest}`;
  add(
    wellFormed && digest === d.digest,
    'Entrant list',
    `${count(sorted.length, 'entrant')}; SHA-256 of the canonical list = ${digest}; ${recorded}`,
  );

  let key = seed;
  if (d.algorithm === V2) {
    const b = d.beacon;
    let ok = false;
    let detail = 'no beacon round recorded';
    if (b && !('unavailable' in b) && b.signature && b.randomness) {
      let chain: DrandChain | undefined;
      if (b.sandbox) {
        const c = { ...b.sandbox, scheme: 'bls-unchained-g1-rfc9380' as const };
        if (chainHashOf(c) === b.chain) chain = { ...c, hash: b.chain };
      } else if (b.chain === QUICKNET.hash) chain = QUICKNET;
      const frozen = d.frozenAt ? Date.parse(d.frozenAt) : NaN;
      const modeProblem = beaconModeProblem(d.mode, b);
      if (modeProblem) detail = modeProblem;
      else if (!chain) detail = `unknown beacon chain ${b.chain}`;
      else if (!verifyRoundSignature(chain, b.round, b.signature))
        detail = `round ${b.round}: the BLS signature does NOT verify against the chain's public key`;
      else if (randomnessOf(b.signature) !== b.randomness)
        detail = `round ${b.round}: randomness is not SHA-256(signature)`;
      else if (!Number.isFinite(frozen) || roundTimeMs(chain, b.round) <= frozen)
        detail = `round ${b.round} was published before the entrant list was frozen`;
      else if (roundAfter(chain, frozen) !== b.round)
        detail = `round ${b.round} is not the first round after the freeze (${roundAfter(chain, frozen)})`;
      else {
        ok = true;
        detail = `${b.sandbox ? 'SANDBOX beacon (a local test key, not drand)' : 'drand quicknet'} round ${b.round}, published ${new Date(roundTimeMs(chain, b.round)).toISOString()} after the list was frozen at ${d.frozenAt}; BLS signature valid; randomness ${b.randomness}`;
      }
      if (ok && seed) {
        key = await hmac(
          seed,
          concat(
            enc.encode('giftdrop-drand-v2'),
            new Uint8Array([0]),
            hexToBytes(d.digest),
            u64(b.round),
            hexToBytes(b.randomness),
          ),
        );
      }
    }
    if (!add(ok, beaconTitle(b), detail)) key = undefined;
  } else if (d.beacon && 'unavailable' in d.beacon) {
    add(
      true,
      'Public beacon',
      `not used: round ${d.beacon.round ?? '?'} could not be fetched in time, so the winners come from the seed alone (v1)`,
    );
  }

  let winners: string[] = [];
  if (key && seed) {
    const aside = d.setAside ?? [];
    const used = d.winners.length + d.rerolls.length + aside.length;
    const seq = await picks(
      key,
      d.digest,
      sorted.map((e) => e[2]),
      used,
    );
    const byPick = new Map(d.winners.map((w) => [w.pick, w]));
    const asideAt = new Map(aside.map((a) => [a.pick, a]));
    const problems: string[] = [];
    if (asideAt.size !== aside.length || aside.some((a, i) => i > 0 && a.pick <= aside[i - 1]!.pick))
      problems.push('the set-aside picks are not in pick order');
    if (seq.length < used) problems.push(`the history uses ${used} picks but only ${seq.length} exist`);
    const away = new Map<string, number>();
    for (const r of d.rerolls) away.set(r.replacedUserId, (away.get(r.replacedUserId) ?? 0) + 1);
    seq.forEach((index, p) => {
      const e = sorted[index]!;
      const w = byPick.get(p);
      const a = asideAt.get(p);
      if (w) {
        if (w.userId !== e[0]) problems.push(`winner at pick ${p} should be ${e[1]}, the history says ${w.login}`);
        if (a) problems.push(`pick ${p} is both a winner and set aside`);
      } else if (a) {
        if (a.userId !== e[0])
          problems.push(`pick ${p} is ${e[1]}, but the history says ${a.login} was set aside there`);
      } else if ((away.get(e[0]) ?? 0) > 0) away.set(e[0], away.get(e[0])! - 1);
      else problems.push(`pick ${p} is ${e[1]}, who is neither a winner nor rerolled away`);
    });
    const taken: number[] = [];
    for (let p = 0; p < used; p++) if (!asideAt.has(p)) taken.push(p);
    d.rerolls.forEach((r, k) => {
      const position = taken[d.winners.length + k] ?? -1;
      const drawn = sorted[seq[position] ?? -1];
      if (r.pick !== undefined && r.pick !== position)
        problems.push(`reroll ${k + 1} took pick ${r.pick}, the next unused pick was ${position}`);
      if (drawn && r.newUserId !== undefined && r.newUserId !== drawn[0])
        problems.push(`reroll ${k + 1} names the wrong replacement (pick ${position} is ${drawn[1]})`);
      const first = seq.findIndex((i) => sorted[i]![0] === r.replacedUserId);
      if (first < 0 || first >= position)
        problems.push(`reroll ${k + 1} replaced ${r.replacedLogin}, who was not a winner before pick ${position}`);
    });
    winners = [...byPick.entries()].sort((a, b) => a[0] - b[0]).map(([p]) => sorted[seq[p] ?? -1]?.[1] ?? '?');
    const nobody =
      d.winners.length === 0 ? `nobody won this draw${d.failure ? ` (${d.failure})` : ''}, so no pick stands` : '';
    const recomputed =
      used === 0
        ? nobody
        : `${count(used, 'pick')} recomputed; winners in pick order: ${winners.join(', ') || '(none)'}${d.rerolls.length ? `; ${count(d.rerolls.length, 'reroll')} took the next picks` : ''}`;
    add(problems.length === 0, 'Winners', problems.length ? problems.join('; ') : recomputed);
    if (aside.length)
      add(
        problems.length === 0,
        'Set aside by the account rules',
        aside.map((a) => `pick ${a.pick}: ${a.login} (${a.reason}; ${answered(a.at, d.frozenAt)})`).join('; '),
      );
  } else {
    add(false, 'Winners', 'not recomputed: an earlier check failed');
  }
  return { checks, winners };
}

/** Renders the checks and the entrant table into the page. */
async function main(doc: Doc): Promise<void> {
  const data = JSON.parse(doc.getElementById('draw-data')!.textContent ?? '{}') as PageData;
  const el = (tag: string, text: string, cls = '') => {
    const e = doc.createElement(tag);
    e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  doc.getElementById('title')!.textContent = `Draw ${data.id}: ${data.product}`;
  const tbody = doc.getElementById('entrants')!;
  for (const [, login, weight] of [...data.entrants].sort((a, b) => (a[1] < b[1] ? -1 : 1))) {
    const tr = doc.createElement('tr');
    tr.appendChild(el('td', login));
    tr.appendChild(el('td', String(weight)));
    tbody.appendChild(tr);
  }
  const status = doc.getElementById('status')!;
  status.textContent = 'Checking…';
  let result: { checks: Check[]; winners: string[] };
  try {
    if (!globalThis.crypto?.subtle) {
      throw new Error('this browser offers no WebCrypto here: open the page over https, or save it and open the file');
    }
    result = await verifyPageData(data);
  } catch (err) {
    result = { checks: [{ ok: false, title: 'Error', detail: String((err as Error)?.message ?? err) }], winners: [] };
  }
  const list = doc.getElementById('checks')!;
  for (const c of result.checks) {
    const li = doc.createElement('li');
    li.className = c.ok ? 'ok' : 'bad';
    li.appendChild(el('strong', `${c.ok ? '✔' : '✘'} ${c.title}: `));
    // Hashes and hex (16+ hex digits) may wrap anywhere (class hex); the words around them never do.
    const span = el('span', '');
    c.detail
      .split(/([0-9a-f]{16,})/)
      .forEach((part, i) => part && span.appendChild(el(i % 2 ? 'code' : 'span', part, i % 2 ? 'hex' : '')));
    li.appendChild(span);
    list.appendChild(li);
  }
  const allOk = result.checks.every((c) => c.ok);
  const nobody = data.winners.length === 0;
  doc.getElementById('computed-winners')!.textContent = nobody
    ? `Nobody won this draw${data.failure ? `: ${data.failure}` : '.'}`
    : result.winners.join(', ');
  const nobodyLine = `Nobody won this draw${data.failure ? `: ${data.failure}` : ''}. `;
  status.textContent = allOk
    ? nobody
      ? `${nobodyLine}Checked in your browser: every check below passed (the seed and the entrant list are the ones committed).`
      : 'Verified in your browser: every check below passed.'
    : 'NOT verified: at least one check below failed. Do not trust this draw.';
  status.className = allOk ? 'ok' : 'bad';
  doc.body.dataset.verdict = allOk ? 'verified' : 'failed';
  doc.body.dataset.outcome = nobody ? 'nobody' : 'winners';
}

const g = globalThis as unknown as { document?: Doc };
if (g.document && g.document.getElementById('draw-data')) void main(g.document);
