/**
 * Reading the JSON an HTTP peer sent. Owns `jsonOrUndefined` only: the HTTP clients (Fourthwall
 * API and OAuth, Twitch OAuth and Helix) use it so an empty or non-JSON body (a proxy's HTML error
 * page, a cut-off answer) becomes `undefined` for their schemas to reject, never a throw.
 */

/** A response body as JSON, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
