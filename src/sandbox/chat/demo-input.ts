/**
 * The sandbox chat demo's stdin syntax: `[+mod] [+vip] [+subN] [+first] [+me] [+bitsN] login: text`
 * becomes a viewer (roles) and an injected message (extras). Pure parsing, no I/O.
 */
import type { InjectExtra, SimViewerOptions } from './viewers.js';

/** A parsed stdin line: who says what, with which roles. */
export interface DemoLine {
  login: string;
  text: string;
  roles: SimViewerOptions;
  extra: InjectExtra;
}

/** Parses `[+flags] login: text`; undefined when the line does not have that shape. */
export function parseDemoLine(line: string): DemoLine | undefined {
  const m = /^\s*((?:\+\w+\s+)*)([A-Za-z0-9_]{1,25})\s*:\s*(.+)$/.exec(line);
  if (!m) return undefined;
  const roles: SimViewerOptions = {};
  const extra: InjectExtra = {};
  for (const flag of (m[1] ?? '').split(/\s+/).filter(Boolean)) {
    const f = /^\+([a-z]+)(\d*)$/.exec(flag.toLowerCase());
    if (!f) return undefined;
    const n = f[2] ? Number(f[2]) : undefined;
    switch (f[1]) {
      case 'mod':
        roles.mod = true;
        break;
      case 'vip':
        roles.vip = true;
        break;
      case 'sub':
        roles.subscriber = true;
        roles.subMonths = n ?? 1;
        break;
      case 'first':
        extra.firstMessage = true;
        break;
      case 'me':
        extra.action = true;
        break;
      case 'bits':
        extra.bits = n ?? 100;
        break;
      default:
        return undefined;
    }
  }
  return { login: m[2]!.toLowerCase(), text: m[3]!.trim(), roles, extra };
}
