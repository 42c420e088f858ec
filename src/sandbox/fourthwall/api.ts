/**
 * The operations of the Fourthwall sandbox API: a route table (method, path relative to the API
 * root, accepted auth scheme, stable operation name) and one synchronous handler per operation,
 * validating bodies like the real service and answering Fourthwall's shapes and error codes.
 * Auth `A` = Basic or Bearer, `B` = Basic only. Handlers only touch the in-memory state, the
 * gifting engine and the webhook hub; transport concerns (auth, rate rule, faults) are the
 * server's.
 *
 * This file owns the table's assembly (groups in a fixed order: the first matching route wins,
 * e.g. `/webhooks/secret` before `/webhooks/:id`) and route matching. The routes live in their
 * groups: api-gifting.ts (donations, gifting, streaming, thank-yous, gift purchases), api-shop.ts
 * (orders, products, shop, promotions), api-fulfillment.ts, api-webhooks.ts; shared types and
 * validators in api-kit.ts (re-exported from here).
 */
import { fulfillmentRoutes } from './api-fulfillment.js';
import { donationAndGiftingRoutes, streamingRoutes } from './api-gifting.js';
import type { ApiDeps, ApiRoute } from './api-kit.js';
import { promotionRoutes, shopRoutes } from './api-shop.js';
import { webhookConfigRoutes } from './api-webhooks.js';

export type { ApiRoute, ApiDeps } from './api-kit.js';

/** Builds the route table over the given state and engines. */
export function buildApiRoutes(d: ApiDeps): ApiRoute[] {
  return [
    ...donationAndGiftingRoutes(d),
    ...shopRoutes(d),
    ...streamingRoutes(d),
    ...fulfillmentRoutes(d),
    ...promotionRoutes(d),
    ...webhookConfigRoutes(d),
  ];
}

export interface RouteMatch {
  route: ApiRoute;
  params: Record<string, string>;
}

/** Finds the route for a method and a path relative to the API root. */
export function matchRoute(
  routes: readonly ApiRoute[],
  method: string,
  path: string,
): RouteMatch | { methodNotAllowed: true } | undefined {
  const segs = path.split('/').filter((s) => s !== '');
  let pathMatched = false;
  for (const route of routes) {
    const pattern = route.path.split('/').filter((s) => s !== '');
    if (pattern.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let hit = true;
    for (let i = 0; i < pattern.length; i++) {
      const p = pattern[i] as string;
      const s = segs[i] as string;
      if (p.startsWith(':')) {
        try {
          params[p.slice(1)] = decodeURIComponent(s);
        } catch {
          hit = false;
          break;
        }
      } else if (p !== s) {
        hit = false;
        break;
      }
    }
    if (!hit) continue;
    if (route.method === method) return { route, params };
    pathMatched = true;
  }
  return pathMatched ? { methodNotAllowed: true } : undefined;
}
