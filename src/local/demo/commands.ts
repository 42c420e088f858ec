/**
 * What the user types in interactive sandbox mode: plain text is said in chat by the broadcaster
 * (`help`, `quit` and `exit` alone are taken as the commands; a line starting with another
 * command's word without its slash is said, with a hint naming the command);
 * `/as [+mod] [+vip] [+subN] [+first] <login> <text>` speaks as a viewer; `/gift <n> [product]`
 * simulates a gift purchase; `/order [product]` a paid order; `/viewers <n>` adds n simulated entrants;
 * `/redeem <login>` a winner claims and redeems their prizes; `/points <login>` a viewer redeems
 * the channel-point reward; `/bits <login> <n>` a viewer uses n bits; `/shared [#partner] <login>
 * <text>` a viewer of a partner channel speaks during Shared Chat (`/shared end` ends it); `/help`;
 * `/quit`.
 * Pure parsing, no I/O: the interactive loop acts on the result.
 */
import { parseDemoLine } from '../../sandbox/chat/demo-input.js';
import type { InjectExtra, SimViewerOptions } from '../../sandbox/chat/index.js';

/** Most simulated entrants one `/viewers` adds. */
export const MAX_DEMO_VIEWERS = 500;
/** Most gifts one purchase may carry (Fourthwall's limit). */
export const MAX_DEMO_GIFTS = 100;
/** The partner channel `/shared` uses when none is named. */
const DEMO_PARTNER = 'cozy_partner';

/** A parsed input line. */
export type DemoCommand =
  | { kind: 'empty' }
  | { kind: 'say'; text: string; hint?: string }
  | { kind: 'as'; login: string; text: string; roles: SimViewerOptions; extra: InjectExtra }
  | { kind: 'gift'; quantity: number; product?: string }
  | { kind: 'order'; product?: string }
  | { kind: 'viewers'; count: number }
  | { kind: 'redeem'; login: string }
  | { kind: 'points'; login: string }
  | { kind: 'bits'; login: string; bits: number }
  | { kind: 'shared'; partner: string; login: string; text: string }
  | { kind: 'shared-end' }
  | { kind: 'help' }
  | { kind: 'quit' }
  | { kind: 'error'; message: string };

/** The `/help` text. */
export const DEMO_HELP = [
  'Type a line to say it in chat as the broadcaster (e.g. !giveaway start mug 1 20, !giveaway end, !stream).',
  '/as <login> <text>      speak as a viewer; roles first if you like: /as +mod +sub6 alice !enter',
  '/gift <n> [product]     a supporter buys n gifts (default product: the first giftable one)',
  '/order [product]        a supporter places a paid order (an alert in chat; counts for the merch train)',
  '/viewers <n>            n simulated viewers type !enter',
  '/redeem <login>         that winner logs in on the claim page and redeems their prizes (or open the claim page yourself)',
  '/points <login>         that viewer redeems the channel-point reward (an entry while a draw is open, else refunded)',
  '/bits <login> <n>       that viewer uses n bits (tickets in the open draw when bits are on in the settings)',
  `/shared [#partner] <login> <text>  a viewer of a partner channel speaks during Shared Chat (default partner #${DEMO_PARTNER}); /shared end ends it`,
  '/help                   this list',
  '/quit                   shut down (Ctrl+C and Ctrl+D too)',
].join('\n');

function wholeNumber(s: string | undefined): number | undefined {
  return s !== undefined && /^\d{1,6}$/.test(s) ? Number(s) : undefined;
}

/** Command words typed without their slash: said in chat, with a hint (help/quit/exit alone run). */
const SLASH_WORDS = new Set(['as', 'gift', 'order', 'viewers', 'redeem', 'help', 'quit', 'exit']);

/** Parses one line the user typed. */
export function parseDemoCommand(line: string): DemoCommand {
  const text = line.trim();
  if (!text) return { kind: 'empty' };
  if (!text.startsWith('/')) {
    const words = text.split(/\s+/);
    const first = words[0]!.toLowerCase();
    if (words.length === 1 && (first === 'help' || first === 'quit' || first === 'exit'))
      return parseDemoCommand(`/${first}`);
    if (SLASH_WORDS.has(first))
      return {
        kind: 'say',
        text,
        hint: `Said in chat as the broadcaster. For the command, type /${first}${words.length > 1 ? ' ...' : ''} (/help lists them).`,
      };
    return { kind: 'say', text };
  }
  const [word = '', ...rest] = text.slice(1).split(/\s+/);
  switch (word.toLowerCase()) {
    case 'help':
    case '?':
      return { kind: 'help' };
    case 'quit':
    case 'exit':
      return { kind: 'quit' };
    case 'as': {
      const flags: string[] = [];
      while (rest[0]?.startsWith('+')) flags.push(rest.shift()!);
      const [login, ...words] = rest;
      const said = words.join(' ');
      const usage = 'usage: /as [+mod] [+vip] [+subN] [+first] <login> <text>';
      if (!login || !said) return { kind: 'error', message: usage };
      const parsed = parseDemoLine(`${flags.join(' ')} ${login}: ${said}`);
      if (!parsed) {
        return {
          kind: 'error',
          message: `${usage} (a login is 1-25 letters, digits or _; roles are +mod +vip +subN +first +me +bitsN)`,
        };
      }
      return { kind: 'as', login: parsed.login, text: parsed.text, roles: parsed.roles, extra: parsed.extra };
    }
    case 'gift': {
      const n = wholeNumber(rest[0]);
      if (n === undefined || n < 1 || n > MAX_DEMO_GIFTS) {
        return { kind: 'error', message: `usage: /gift <n> [product]  (n from 1 to ${MAX_DEMO_GIFTS})` };
      }
      const product = rest.slice(1).join(' ');
      return product ? { kind: 'gift', quantity: n, product } : { kind: 'gift', quantity: n };
    }
    case 'order': {
      const product = rest.join(' ');
      return product ? { kind: 'order', product } : { kind: 'order' };
    }
    case 'viewers': {
      const n = wholeNumber(rest[0]);
      if (n === undefined || n < 1 || n > MAX_DEMO_VIEWERS || rest.length > 1) {
        return { kind: 'error', message: `usage: /viewers <n>  (n from 1 to ${MAX_DEMO_VIEWERS})` };
      }
      return { kind: 'viewers', count: n };
    }
    case 'redeem': {
      const login = rest[0]?.replace(/^@/, '').toLowerCase();
      if (!login || rest.length > 1 || !/^[a-z0-9_]{1,25}$/.test(login))
        return { kind: 'error', message: 'usage: /redeem <login>' };
      return { kind: 'redeem', login };
    }
    case 'points':
    case 'bits': {
      const login = rest[0]?.replace(/^@/, '').toLowerCase();
      const n = wholeNumber(rest[1]);
      const usage =
        word.toLowerCase() === 'points' ? 'usage: /points <login>' : 'usage: /bits <login> <n>  (n from 1 to 100000)';
      if (!login || !/^[a-z0-9_]{1,25}$/.test(login)) return { kind: 'error', message: usage };
      if (word.toLowerCase() === 'points')
        return rest.length > 1 ? { kind: 'error', message: usage } : { kind: 'points', login };
      if (n === undefined || n < 1 || n > 100_000 || rest.length > 2) return { kind: 'error', message: usage };
      return { kind: 'bits', login, bits: n };
    }
    case 'shared': {
      if (rest.length === 1 && rest[0]!.toLowerCase() === 'end') return { kind: 'shared-end' };
      const partner = rest[0]?.startsWith('#') ? rest.shift()!.slice(1).toLowerCase() : DEMO_PARTNER;
      const login = rest[0]?.replace(/^@/, '').toLowerCase();
      const text = rest.slice(1).join(' ');
      const valid = (l: string | undefined) => l !== undefined && /^[a-z0-9_]{1,25}$/.test(l);
      if (!valid(partner) || !valid(login) || !text)
        return { kind: 'error', message: 'usage: /shared [#partner] <login> <text>  (or /shared end)' };
      return { kind: 'shared', partner, login: login!, text };
    }
    default:
      return { kind: 'error', message: `unknown command /${word}: /help lists the commands` };
  }
}
