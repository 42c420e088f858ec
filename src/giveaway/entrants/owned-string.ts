/**
 * `ownedString`: a copy of a string that owns its characters, for strings kept long-term that were
 * cut from a larger one. V8 keeps substrings of 13 or more characters as views into the string
 * they were cut from (for chat: the whole socket frame), so a kept substring pins that frame.
 *
 * Contract: returns a string equal to `s`; for 13+ characters, one that shares no storage with
 * another string. Shorter strings are returned as they are (V8 copies those when cutting).
 */
export function ownedString(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}
