/**
 * Counted nouns for every line a person reads (chat, console, demo narration): `plural(1, 'entrant')`
 * is "1 entrant", `plural(20, 'entrant')` "20 entrants", never "20 entrant(s)".
 * Contract: pure; `many` defaults to `one` + "s".
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
