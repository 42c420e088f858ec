/**
 * Webhook configuration routes (BETA) of the Fourthwall sandbox API: list / create / get / update
 * / delete configurations, the shop webhook secret, and past deliveries (`GET /webhook-events`).
 *
 * Contract: configurations are validated with Fourthwall's URI rules (webhook-config.ts, via
 * webhooks.ts) and kept by the webhook hub; `/webhooks/secret` is matched before
 * `/webhooks/:webhookConfigurationId` (route order). Unknown ids answer 404
 * `WEBHOOK_CONFIGURATION_NOT_FOUND`.
 *
 * Deliberately not here: delivery (webhooks.ts, webhook-delivery.ts), the other route groups.
 */
import { asObject, invalid, pageOf, paginate } from './http.js';
import { ok, type ApiDeps, type ApiRoute } from './api-kit.js';
import { WEBHOOK_EVENT_TYPES } from './types.js';
import { parseWebhookBody } from './webhooks.js';

/** Webhook configurations (BETA), the secret and past events. */
export function webhookConfigRoutes(d: ApiDeps): ApiRoute[] {
  const { hub } = d;
  return [
    // Webhooks (BETA)
    {
      operation: 'listWebhooks',
      method: 'GET',
      path: '/webhooks',
      auth: 'A',
      handler: ({ query }) => ok(paginate([...hub.configs.values()], pageOf(query))),
    },
    {
      operation: 'createWebhook',
      method: 'POST',
      path: '/webhooks',
      auth: 'A',
      handler: ({ json }) => {
        const { url, allowedTypes } = parseWebhookBody(asObject(json()), d.uriRules);
        return ok(hub.create(url, allowedTypes));
      },
    },
    {
      operation: 'getWebhookSecret',
      method: 'GET',
      path: '/webhooks/secret',
      auth: 'B',
      handler: () => ok({ secret: d.webhookSecret }),
    },
    {
      operation: 'getWebhook',
      method: 'GET',
      path: '/webhooks/:webhookConfigurationId',
      auth: 'A',
      handler: ({ params }) => ok(hub.get(params['webhookConfigurationId'] as string)),
    },
    {
      operation: 'updateWebhook',
      method: 'PUT',
      path: '/webhooks/:webhookConfigurationId',
      auth: 'A',
      handler: ({ params, json }) => {
        const id = params['webhookConfigurationId'] as string;
        hub.get(id);
        const { url, allowedTypes } = parseWebhookBody(asObject(json()), d.uriRules);
        return ok(hub.update(id, url, allowedTypes));
      },
    },
    {
      operation: 'deleteWebhook',
      method: 'DELETE',
      path: '/webhooks/:webhookConfigurationId',
      auth: 'A',
      handler: ({ params }) => {
        hub.remove(params['webhookConfigurationId'] as string);
        return { status: 200 };
      },
    },
    {
      operation: 'listWebhookEvents',
      method: 'GET',
      path: '/webhook-events',
      auth: 'A',
      handler: ({ query }) => {
        const type = query.get('type');
        if (type !== null && !WEBHOOK_EVENT_TYPES.includes(type)) throw invalid('type', 'is not a webhook event type');
        return ok(paginate(hub.events(type ?? undefined), pageOf(query, 50)));
      },
    },
  ];
}
