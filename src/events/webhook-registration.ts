/**
 * The bot's one webhook configuration at Fourthwall, kept pointing at `<GIFTDROP_PUBLIC_URL>/webhooks/fourthwall`:
 * run by `setup` (terminal and page) and at every live start, so a new tunnel address costs nothing.
 *
 * Contract: `ensureWebhook` lists the configurations and picks the bot's: the one whose id
 * DATA_DIR/webhook.json recorded, else one already at the URL, else (no record) one old
 * configuration at another address ending in /webhooks/fourthwall (an earlier tunnel), else none.
 * The bot's is UPDATED (address and event types) when either differs, never duplicated; without
 * one, one is created. The id and address are then recorded (disk protocol, owner-only). Other
 * configurations at the same URL are reported as duplicates, old ones at other addresses as stale
 * (never deleted: they may be another bot's). Errors are Fourthwall's (the caller words them:
 * `webhookProblem`). Does not: start anything, or touch a configuration of another path.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { FourthwallClient } from '../fourthwall/index.js';
import { FourthwallApiError, FourthwallAuthError } from '../fourthwall/index.js';
import { nodeDisk, type Disk } from '../storage/index.js';
import type { Logger } from '../logging/index.js';

/** The path the bot serves Fourthwall webhooks on. */
const WEBHOOK_PATH = '/webhooks/fourthwall';
const WEBHOOK_RECORD_FILE = 'webhook.json';

const RecordSchema = z.object({ id: z.string().min(1), url: z.string().min(1) });

export interface WebhookOutcome {
  action: 'created' | 'updated' | 'unchanged';
  id: string;
  url: string;
  /** The address it pointed at before an update. */
  previousUrl?: string;
  /** Event types added and removed by an update. */
  added: string[];
  removed: string[];
  /** Other configurations at the same URL (each event would arrive once per configuration). */
  duplicates: string[];
  /** Configurations at other addresses of this path (an old tunnel, another bot). */
  stale: string[];
}

export interface EnsureWebhookOptions {
  client: Pick<FourthwallClient, 'listWebhooks' | 'createWebhook' | 'updateWebhook'>;
  /** GIFTDROP_PUBLIC_URL (no trailing slash). */
  publicUrl: string;
  types: readonly string[];
  /** Where webhook.json lives (live DATA_DIR). */
  dataDir: string;
  disk?: Disk;
}

export async function ensureWebhook(o: EnsureWebhookOptions): Promise<WebhookOutcome> {
  const disk = o.disk ?? nodeDisk;
  const file = join(o.dataDir, WEBHOOK_RECORD_FILE);
  const url = `${o.publicUrl}${WEBHOOK_PATH}`;
  const record = readRecord(await disk.readText(file).catch(() => undefined));
  const existing = (await o.client.listWebhooks()).results;
  const ours =
    (record && existing.find((w) => w.id === record.id)) ??
    existing.find((w) => w.url === url) ??
    (record ? undefined : existing.find((w) => w.url.endsWith(WEBHOOK_PATH)));
  let outcome: WebhookOutcome;
  if (!ours) {
    const created = await o.client.createWebhook({ url, allowedTypes: [...o.types] });
    outcome = { action: 'created', id: created.id, url, added: [...o.types], removed: [], duplicates: [], stale: [] };
  } else {
    const added = o.types.filter((t) => !ours.allowedTypes.includes(t));
    const removed = ours.allowedTypes.filter((t) => !o.types.includes(t));
    const moved = ours.url !== url;
    if (moved || added.length || removed.length)
      await o.client.updateWebhook(ours.id, { url, allowedTypes: [...o.types] });
    outcome = {
      action: moved || added.length || removed.length ? 'updated' : 'unchanged',
      id: ours.id,
      url,
      ...(moved ? { previousUrl: ours.url } : {}),
      added,
      removed,
      duplicates: [],
      stale: [],
    };
  }
  outcome.duplicates = existing.filter((w) => w.url === url && w.id !== outcome.id).map((w) => w.id);
  outcome.stale = existing
    .filter((w) => w.id !== outcome.id && w.url !== url && w.url.endsWith(WEBHOOK_PATH))
    .map((w) => w.url);
  if (!record || record.id !== outcome.id || record.url !== url) {
    await disk.mkdirs(o.dataDir);
    await disk.writeAtomic(file, `${JSON.stringify({ id: outcome.id, url })}\n`);
  }
  return outcome;
}

function readRecord(text: string | undefined): z.infer<typeof RecordSchema> | undefined {
  if (!text) return undefined;
  try {
    const r = RecordSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

const URI_PROBLEMS: Record<string, string> = {
  WEBHOOK_URI_IP_NOT_ALLOWED:
    'Fourthwall refuses webhook URLs on IP addresses: use the https:// host name of your tunnel',
  WEBHOOK_URI_PORT_NOT_ALLOWED:
    "Fourthwall refuses webhook URLs on unusual ports: use the tunnel's https:// address without a port",
  WEBHOOK_URI_UNALLOWED_DOMAIN:
    'Fourthwall refuses webhook URLs on this domain: use the https:// address of an HTTPS tunnel (cloudflared, ngrok)',
};

/** One line saying why Fourthwall refused the webhook address and what to do. */
export function webhookProblem(err: unknown, publicUrl: string): string {
  if (err instanceof FourthwallApiError && err.apiCode && URI_PROBLEMS[err.apiCode]) {
    return `${URI_PROBLEMS[err.apiCode]} (GIFTDROP_PUBLIC_URL=${publicUrl}, ${err.apiCode})`;
  }
  // 401: the credentials themselves were refused (said once with their fix, credential-problems.ts);
  // 403: they work, but the API user may not touch webhooks.
  if (err instanceof FourthwallAuthError && err.status === 401) {
    return `Fourthwall refused the API user (401) when the bot registered its webhook at ${publicUrl}${WEBHOOK_PATH}: the username and password are refused, not only for webhooks`;
  }
  if (err instanceof FourthwallAuthError) {
    return `Fourthwall answered ${err.status} for the webhook configurations: the API user needs webhook read/write permissions`;
  }
  return `could not register ${publicUrl}${WEBHOOK_PATH} at Fourthwall: ${(err as Error).message}`;
}

/**
 * At a live start: the webhook configuration follows GIFTDROP_PUBLIC_URL (a new tunnel address
 * needs no `setup`). Said in one log line when something changed; a refusal is one line through
 * `problem` (kept for /healthz and the dashboard). Never throws.
 */
export async function keepWebhookCurrent(
  o: EnsureWebhookOptions & { log: Logger; problem: (line: string) => void },
): Promise<WebhookOutcome | undefined> {
  try {
    const out = await ensureWebhook(o);
    if (out.action === 'created')
      o.log.info({ webhook: out.url, id: out.id }, `webhook registered at Fourthwall: ${out.url}`);
    else if (out.action === 'updated')
      o.log.info(
        { webhook: out.url, id: out.id },
        out.previousUrl
          ? `webhook moved at Fourthwall from ${out.previousUrl} to ${out.url} (GIFTDROP_PUBLIC_URL changed)`
          : `webhook event types updated at Fourthwall (${out.url})`,
      );
    if (out.duplicates.length)
      o.log.warn(
        `${out.duplicates.length + 1} webhook configurations point at ${out.url}: delete the extra ones in the Fourthwall dashboard (${out.duplicates.join(', ')})`,
      );
    return out;
  } catch (err) {
    o.problem(webhookProblem(err, o.publicUrl));
    return undefined;
  }
}
