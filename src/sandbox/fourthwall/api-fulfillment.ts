/**
 * Fulfillment routes (BETA) of the Fourthwall sandbox API: create a fulfillment for an order,
 * find fulfillment ids, add a shipping label, bulk add shipping labels.
 *
 * Contract: synchronous handlers over the in-memory state with the real service's checks and
 * error codes (`FULFILLMENT_ORDER_NOT_FOUND`, `FULFILLMENT_ALREADY_EXISTS`,
 * `FULFILLMENT_VARIANT_QUANTITY_TO_HIGH`, `FULFILLMENT_NOT_FOUND`, ...). Creating a fulfillment
 * moves the order to SHIPPED / PARTIALLY_SHIPPED and emits ORDER_UPDATED through the webhook hub.
 *
 * Deliberately not here: orders themselves (api-shop.ts), the other route groups.
 */
import { ApiError, asObject, invalid, optionalString, requireString } from './http.js';
import { arrayField, isoNow, multi, ok, positiveInt, uuidField, type ApiDeps, type ApiRoute } from './api-kit.js';
import type { Fulfillment, Order, ShippingLabel } from './types.js';

/** The fulfillment services the sandbox knows by name (the real list has 34). */
const FULFILLMENT_SERVICES: readonly string[] = [
  'FULFILLED_BY_CREATOR',
  'FULFILLED_BY_FOURTHWALL',
  'FULFILLED_BY_MANUFACTURER',
  'DIGITAL_ITEM',
];

/** Fulfillment (BETA). */
export function fulfillmentRoutes(d: ApiDeps): ApiRoute[] {
  const { state, hub } = d;
  const iso = (): string => isoNow(d);

  const parseLabel = (body: Record<string, unknown>, prefix: string): ShippingLabel => {
    const items = body['items'];
    if (!Array.isArray(items)) throw invalid(`${prefix}items`, 'is required and must be an array');
    const trackingService = optionalString(body, 'trackingService', prefix);
    const trackingNumber = optionalString(body, 'trackingNumber', prefix);
    const labelUrl = optionalString(body, 'labelUrl', prefix);
    return {
      trackingCompany: requireString(body, 'trackingCompany', prefix),
      ...(trackingService !== undefined ? { trackingService } : {}),
      ...(trackingNumber !== undefined ? { trackingNumber } : {}),
      ...(labelUrl !== undefined ? { labelUrl } : {}),
      items: items.map((it, i) => {
        const o = asObject(it, `${prefix}items[${i}]`);
        return {
          offerVariantId: uuidField(o, 'offerVariantId', `${prefix}items[${i}].`),
          quantity: positiveInt(o, 'quantity', `${prefix}items[${i}].`),
        };
      }),
    };
  };

  const fulfillment = (id: string): Fulfillment => {
    const f = state.fulfillments.get(id);
    if (!f) throw new ApiError(404, 'FULFILLMENT_NOT_FOUND', { fulfillmentId: id });
    return f;
  };

  const addLabel = (f: Fulfillment, label: ShippingLabel): Fulfillment => {
    f.shippingLabels.push(label);
    f.updatedAt = iso();
    return f;
  };

  const orderUpdated = (order: Order): void => {
    hub.emit('ORDER_UPDATED', { order, update: { type: 'STATUS' } });
  };

  return [
    // Fulfillment (BETA)
    {
      operation: 'createFulfillment',
      method: 'POST',
      path: '/fulfillments',
      auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const orderId = uuidField(body, 'orderId');
        const items = arrayField(body, 'items', 1).map((it, i) => {
          const o = asObject(it, `items[${i}]`);
          return {
            variantId: uuidField(o, 'variantId', `items[${i}].`),
            quantity: positiveInt(o, 'quantity', `items[${i}].`),
          };
        });
        const label = asObject(body['shippingLabel'], 'shippingLabel');
        const trackingNumber = requireString(label, 'trackingNumber', 'shippingLabel.');
        const trackingCompany = requireString(label, 'trackingCompany', 'shippingLabel.');
        const order = state.orders.get(orderId);
        if (!order) throw new ApiError(404, 'FULFILLMENT_ORDER_NOT_FOUND', { orderId });
        const fulfilled = new Map<string, number>();
        for (const f of state.fulfillments.values()) {
          if (f.orderId !== orderId) continue;
          for (const it of f.items) fulfilled.set(it.variantId, (fulfilled.get(it.variantId) ?? 0) + it.quantity);
        }
        for (const it of items) {
          const line = order.offers.find((o) => o.variant.id === it.variantId);
          if (!line) throw new ApiError(400, 'FULFILLMENT_ORDER_INVALID_VARIANT', { orderId, variantId: it.variantId });
          const fulfillable = line.variant.quantity - (fulfilled.get(it.variantId) ?? 0);
          if (fulfillable <= 0 && items.length === 1) {
            const existing = [...state.fulfillments.values()].find((f) => f.orderId === orderId);
            throw new ApiError(400, 'FULFILLMENT_ALREADY_EXISTS', { fulfillmentId: existing?.id, orderId });
          }
          if (it.quantity > fulfillable) {
            throw new ApiError(400, 'FULFILLMENT_VARIANT_QUANTITY_TO_HIGH', {
              orderId,
              variantId: it.variantId,
              fulfillable,
              quantity: it.quantity,
            });
          }
          fulfilled.set(it.variantId, (fulfilled.get(it.variantId) ?? 0) + it.quantity);
        }
        const now = iso();
        const f: Fulfillment = {
          id: d.ids.prefixed('ful'),
          shopId: state.shop.id,
          orderId,
          status: 'OPEN',
          fulfillmentService: 'FULFILLED_BY_CREATOR',
          items,
          createdAt: now,
          updatedAt: now,
          shippingLabels: [
            {
              trackingCompany,
              trackingNumber,
              items: items.map((i) => ({ offerVariantId: i.variantId, quantity: i.quantity })),
            },
          ],
          orderShipmentId: d.ids.prefixed('osh'),
          fulfillmentServiceShopConfigId: 1,
        };
        state.fulfillments.set(f.id, f);
        const complete = order.offers.every((o) => (fulfilled.get(o.variant.id) ?? 0) >= o.variant.quantity);
        order.status = complete ? 'SHIPPED' : 'PARTIALLY_SHIPPED';
        order.updatedAt = now;
        orderUpdated(order);
        return ok({ fulfillmentId: f.id }, 201);
      },
    },
    {
      operation: 'findFulfillmentIds',
      method: 'POST',
      path: '/fulfillments/find-ids',
      auth: 'A',
      handler: ({ json }) => {
        const body = asObject(json());
        const friendlyIds = arrayField(body, 'friendlyIds').map((v, i) => {
          if (typeof v !== 'string') throw invalid(`friendlyIds[${i}]`, 'must be a string');
          return v;
        });
        const service = requireString(body, 'fulfillmentService');
        if (!FULFILLMENT_SERVICES.includes(service) && !/^FULFILLED_BY_[A-Z0-9_]+$/.test(service)) {
          throw invalid('fulfillmentService', 'is not a known fulfillment service');
        }
        const out: { friendlyId: string; fulfillmentService: string; fulfillmentId: string }[] = [];
        for (const f of state.fulfillments.values()) {
          const order = state.orders.get(f.orderId);
          if (order && friendlyIds.includes(order.friendlyId) && f.fulfillmentService === service) {
            out.push({ friendlyId: order.friendlyId, fulfillmentService: f.fulfillmentService, fulfillmentId: f.id });
          }
        }
        return ok(out);
      },
    },
    {
      operation: 'bulkAddShippingLabels',
      method: 'POST',
      path: '/fulfillments/shipping-labels/bulk',
      auth: 'A',
      handler: ({ json, query }) => {
        // The spec passes the bulk request as one query parameter object (flattened here:
        // fulfillmentId (repeatable), trackingCompany, trackingNumber?, trackingService?,
        // labelUrl?; the label covers the fulfillment's items). A JSON body `{labels}` is also accepted.
        const ids = multi(query, 'fulfillmentId');
        if (ids.length) {
          const company = query.get('trackingCompany');
          if (!company) throw invalid('trackingCompany', 'is required');
          const extra = (k: string) => (query.get(k) ? { [k]: query.get(k) as string } : {});
          return ok(
            {
              result: ids.map((id) => {
                const f = fulfillment(id);
                const label: ShippingLabel = {
                  trackingCompany: company,
                  ...extra('trackingNumber'),
                  ...extra('trackingService'),
                  ...extra('labelUrl'),
                  items: f.items.map((it) => ({ offerVariantId: it.variantId, quantity: it.quantity })),
                };
                return addLabel(f, label);
              }),
            },
            201,
          );
        }
        const body = asObject(json());
        const labels = arrayField(body, 'labels', 1).map((l, i) => {
          const o = asObject(l, `labels[${i}]`);
          return {
            fulfillmentId: requireString(o, 'fulfillmentId', `labels[${i}].`),
            label: parseLabel(o, `labels[${i}].`),
          };
        });
        const targets = labels.map((l) => ({ f: fulfillment(l.fulfillmentId), label: l.label }));
        return ok({ result: targets.map((t) => addLabel(t.f, t.label)) }, 201);
      },
    },
    {
      operation: 'addShippingLabel',
      method: 'POST',
      path: '/fulfillments/:fulfillmentId/shipping-labels',
      auth: 'A',
      handler: ({ params, json }) => {
        const label = parseLabel(asObject(json()), '');
        return ok(addLabel(fulfillment(params['fulfillmentId'] as string), label), 201);
      },
    },
  ];
}
