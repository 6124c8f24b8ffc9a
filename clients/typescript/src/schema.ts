// Generated from openapi.json by `npm run generate -w clients/typescript`: do not edit.
// src/schema.spec.ts fails when this file is stale.

export interface paths {
    "/health/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness
         * @description The process is up and answering.
         */
        get: operations["live"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness
         * @description The instance can serve: its database answers, the tables and columns it uses are there, and it is not shutting down.
         */
        get: operations["ready"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List plants
         * @description Returns the plants of the calling user, ordered by id ascending, one page at a time. When more remain, the `Link` header carries the next page. Needs the scope plants:read.
         */
        get: operations["listPlants"];
        put?: never;
        /**
         * Create a plant
         * @description Creates a new plant in the store. Safe to retry with an `Idempotency-Key`. Needs the scope plants:write.
         */
        post: operations["createPlant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a plant
         * @description Deletes a single plant of the calling user by id. Needs the scope plants:write.
         */
        delete: operations["deletePlant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhook subscriptions
         * @description The calling user's subscriptions in id order, with whether each is still enabled; never their secrets. Needs the scope webhooks:manage.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Subscribe to plant events
         * @description Every plant.created / plant.deleted of the calling user committed after this answer is delivered to `url`, signed per Standard Webhooks with the `secret` of this answer (shown only here). See the `webhooks` tag for the deliveries. At most 10 subscriptions per user. Safe to retry with an `Idempotency-Key`: a repeat by the same user gets the same subscription and secret. Needs the scope webhooks:manage.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Unsubscribe
         * @description Deletes the subscription with its pending deliveries and their history; nothing more is sent to it. Needs the scope webhooks:manage.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change a subscription
         * @description A JSON Merge Patch (RFC 7396) of the subscription: `url`, `events`, `description` (`null` removes it) and `enabled`; what the body leaves out stays. A new URL passes the address policy as on create. `enabled: true` re-enables a disabled subscription and starts its failure clock afresh; what it held while disabled is sent only if recovered (`POST /webhooks/{id}/recover`). `enabled: false` disables it. The id and the secret stay. Safe to retry with an `Idempotency-Key`. Needs the scope webhooks:manage.
         */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret
         * @description Makes a new signing secret, shown only in this answer. The secret it replaces keeps signing every delivery beside the new one for `gracePeriodSeconds` (24 hours unless the body says, at most 7 days): `webhook-signature` then carries both signatures, so a receiver verifying with either accepts it; after that only the new one. A secret an earlier rotation replaced stops signing at once. The body may be left out. Safe to retry with an `Idempotency-Key`: a repeat gets the same new secret. Needs the scope webhooks:manage.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Sends a `webhook.test` event to the subscription now, signed as a delivery, through the same address policy, sender and timeout, and answers with how the endpoint took it (the answer is 200 whatever the endpoint answered). Nothing is recorded: no event, no delivery attempt, no effect on the failure clock; a disabled subscription can be tested too. One test of a subscription at a time. An `Idempotency-Key` makes a retry give the first outcome instead of sending again. Needs the scope webhooks:manage.
         */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries/{eventId}/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resend one delivery
         * @description Sends the delivery of this event to the subscription again, as a new attempt made as soon as a slot is free, with the same `webhook-id` (a receiver that drops duplicates keeps working) and the retry schedule from its start, whatever it ended as (delivered, failed, held); one being attempted at this moment is sent once more after it. Deliveries are kept 7 days. An `Idempotency-Key` makes a retry not resend twice. Needs the scope webhooks:manage.
         */
        post: operations["resendWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Recover failed and held deliveries
         * @description Sends again every delivery to the subscription of an event since `since` that failed (its retries spent) or was held while the subscription was disabled, each with its `webhook-id` and the retry schedule from its start. It runs in the background, at the pace the subscription is delivered (the slots it may hold), so a large backlog never holds up other subscriptions. A recovery of the subscription under way is replaced. `since` is within the last 7 days, what deliveries are kept for. Needs the scope webhooks:manage.
         */
        post: operations["recoverWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Recent delivery attempts
         * @description The last 100 attempts to deliver events to this subscription, newest first, kept for 7 days. Needs the scope webhooks:manage.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhook events
         * @description The calling user's webhook events, each with the `id` (its `webhook-id`), `type`, `timestamp` and `data` its deliveries carried: the events a subscription of the user (enabled or disabled) wanted when they happened. Newest first unless `order=asc`, one page at a time; kept 7 days. When more remain, the `Link` header carries the next page. Needs the scope webhooks:manage.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Health: {
            /**
             * @example ok
             * @enum {string}
             */
            status: "ok";
            /**
             * @description Each checked dependency and its state
             * @example {
             *       "lifecycle": {
             *         "status": "up"
             *       },
             *       "database": {
             *         "status": "up"
             *       },
             *       "schema": {
             *         "status": "up"
             *       }
             *     }
             */
            info: {
                [key: string]: {
                    /** @enum {string} */
                    status?: "up";
                };
            };
        };
        Error: {
            /**
             * Format: int32
             * @description The HTTP status code
             * @example 400
             */
            error: number;
            /**
             * @description What went wrong, readable by a person
             * @example name must not be blank
             */
            message: string;
        };
        NewPlant: {
            /**
             * Format: int64
             * @description Identification number of the plant, chosen by the client and unique per user. Any signed 64-bit integer (-9223372036854775808 to 9223372036854775807), written as a JSON integer; it is kept exactly, also beyond 2^53.
             * @example 7
             */
            id: bigint;
            /**
             * @description The name of the plant: 1 to 255 characters, not only whitespace
             * @example Monstera deliciosa
             */
            name: string;
            /**
             * @description Tag that specifies the type: 1 to 64 characters. Omit it (or send null) for none.
             * @example tropical
             */
            tag?: string | null;
        };
        Plant: {
            /**
             * Format: int64
             * @description Identification number of the plant, chosen by the client and unique per user. Any signed 64-bit integer (-9223372036854775808 to 9223372036854775807), written as a JSON integer; it is kept exactly, also beyond 2^53.
             * @example 7
             */
            id: bigint;
            /**
             * @description The name of the plant: 1 to 255 characters, not only whitespace
             * @example Monstera deliciosa
             */
            name: string;
            /**
             * @description Tag that specifies the type: 1 to 64 characters; absent when the plant has none
             * @example tropical
             */
            tag?: string;
        };
        NewWebhook: {
            /**
             * @description Where deliveries are POSTed: an https URL of at most 2048 characters whose host resolves only to public addresses (loopback, private, link-local, CGNAT and cloud metadata addresses are refused, IPv6 included). Checked now and again before every attempt.
             * @example https://hooks.example.com/plant-store
             */
            url: string;
            /**
             * @description The events to deliver: one or both of plant.created and plant.deleted
             * @example [
             *       "plant.created",
             *       "plant.deleted"
             *     ]
             */
            events: ("plant.created" | "plant.deleted")[];
            /**
             * @description A note for people: 1 to 255 characters
             * @example Inventory sync
             */
            description?: string;
        };
        CreatedWebhook: {
            /**
             * Format: int64
             * @description Identification number of the subscription, chosen by the service: a random integer from 1 to 2^53 - 1 (Number.MAX_SAFE_INTEGER), which every JSON parser reads exactly, one that reads numbers as doubles (`JSON.parse`) included. A subscription made by an earlier release, which gave ids up to 2^63 - 1, has such an id as well; the id it was given then still names it in paths.
             * @example 4817263512
             */
            id: bigint;
            /** @example https://hooks.example.com/plant-store */
            url: string;
            /**
             * @example [
             *       "plant.created"
             *     ]
             */
            events: ("plant.created" | "plant.deleted")[];
            /** @example Inventory sync */
            description?: string;
            /**
             * Format: date-time
             * @example 2026-11-24T09:30:00.000Z
             */
            createdAt: string;
            /**
             * @description False once the subscription was disabled: its endpoint answered 410 Gone, every delivery failed for WEBHOOK_DISABLE_AFTER (5 days by default), or it was disabled through PATCH. Nothing is sent to a disabled subscription; what it would receive is held, and sent if recovered. `PATCH` with `enabled: true` re-enables it.
             * @example true
             */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled
             */
            disabledAt?: string;
            /**
             * @description Why it was disabled
             * @example the endpoint answered 410 Gone
             */
            disabledReason?: string;
            /**
             * Format: date-time
             * @description Present while the secret the last rotation replaced still signs deliveries (beside the current one): until when.
             * @example 2026-11-25T09:30:00.000Z
             */
            previousSecretExpiresAt?: string;
            /**
             * @description The signing secret (Standard Webhooks: `whsec_` and base64). Shown only in this answer; keep it to verify the `webhook-signature` of every delivery.
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdIiQ6z3oQ7A=
             */
            secret: string;
        };
        Webhook: {
            /**
             * Format: int64
             * @description Identification number of the subscription, chosen by the service: a random integer from 1 to 2^53 - 1 (Number.MAX_SAFE_INTEGER), which every JSON parser reads exactly, one that reads numbers as doubles (`JSON.parse`) included. A subscription made by an earlier release, which gave ids up to 2^63 - 1, has such an id as well; the id it was given then still names it in paths.
             * @example 4817263512
             */
            id: bigint;
            /** @example https://hooks.example.com/plant-store */
            url: string;
            /**
             * @example [
             *       "plant.created"
             *     ]
             */
            events: ("plant.created" | "plant.deleted")[];
            /** @example Inventory sync */
            description?: string;
            /**
             * Format: date-time
             * @example 2026-11-24T09:30:00.000Z
             */
            createdAt: string;
            /**
             * @description False once the subscription was disabled: its endpoint answered 410 Gone, every delivery failed for WEBHOOK_DISABLE_AFTER (5 days by default), or it was disabled through PATCH. Nothing is sent to a disabled subscription; what it would receive is held, and sent if recovered. `PATCH` with `enabled: true` re-enables it.
             * @example true
             */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled
             */
            disabledAt?: string;
            /**
             * @description Why it was disabled
             * @example the endpoint answered 410 Gone
             */
            disabledReason?: string;
            /**
             * Format: date-time
             * @description Present while the secret the last rotation replaced still signs deliveries (beside the current one): until when.
             * @example 2026-11-25T09:30:00.000Z
             */
            previousSecretExpiresAt?: string;
        };
        WebhookChange: {
            /**
             * @description A new URL, under the same rules as on create: https, at most 2048 characters, a host that resolves only to public addresses. Deliveries not yet sent go to it.
             * @example https://hooks.example.com/plant-store/v2
             */
            url?: string;
            /**
             * @description The events to deliver from now on: one or both of plant.created and plant.deleted
             * @example [
             *       "plant.created"
             *     ]
             */
            events?: ("plant.created" | "plant.deleted")[];
            /**
             * @description A note for people: 1 to 255 characters; `null` removes it
             * @example Inventory sync (staging)
             */
            description?: string | null;
            /**
             * @description `true` re-enables a disabled subscription (its failure clock starts afresh; what it held while disabled is sent only if recovered: `POST /webhooks/{id}/recover`). `false` disables it: nothing is sent to it, and what it would receive is held for a recovery, within the retention.
             * @example true
             */
            enabled?: boolean;
        };
        WebhookSecretRotation: {
            /**
             * @description How long the secret being replaced keeps signing deliveries beside the new one, in seconds: 0 to 604800 (7 days), 86400 (24 hours) when left out. 0 retires it at once.
             * @example 3600
             */
            gracePeriodSeconds?: number;
        };
        RotatedWebhook: {
            /**
             * Format: int64
             * @description Identification number of the subscription, chosen by the service: a random integer from 1 to 2^53 - 1 (Number.MAX_SAFE_INTEGER), which every JSON parser reads exactly, one that reads numbers as doubles (`JSON.parse`) included. A subscription made by an earlier release, which gave ids up to 2^63 - 1, has such an id as well; the id it was given then still names it in paths.
             * @example 4817263512
             */
            id: bigint;
            /** @example https://hooks.example.com/plant-store */
            url: string;
            /**
             * @example [
             *       "plant.created"
             *     ]
             */
            events: ("plant.created" | "plant.deleted")[];
            /** @example Inventory sync */
            description?: string;
            /**
             * Format: date-time
             * @example 2026-11-24T09:30:00.000Z
             */
            createdAt: string;
            /**
             * @description False once the subscription was disabled: its endpoint answered 410 Gone, every delivery failed for WEBHOOK_DISABLE_AFTER (5 days by default), or it was disabled through PATCH. Nothing is sent to a disabled subscription; what it would receive is held, and sent if recovered. `PATCH` with `enabled: true` re-enables it.
             * @example true
             */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled
             */
            disabledAt?: string;
            /**
             * @description Why it was disabled
             * @example the endpoint answered 410 Gone
             */
            disabledReason?: string;
            /**
             * Format: date-time
             * @description Present while the secret the last rotation replaced still signs deliveries (beside the current one): until when.
             * @example 2026-11-25T09:30:00.000Z
             */
            previousSecretExpiresAt?: string;
            /**
             * @description The new signing secret (`whsec_` and base64), which signs every delivery from now on. Shown only in this answer. Until `previousSecretExpiresAt` the secret it replaced signs them too.
             * @example whsec_3yQ0mP1nVvXQx1T8RlkM8vZC2Gd2mWcRj0sC9sEoX5g=
             */
            secret: string;
        };
        WebhookTestResult: {
            /**
             * @description The `webhook-id` the test was sent with: `test_` and 32 hex digits
             * @example test_5f0c6d2e8a1b4c3d9e7f60a1b2c3d4e5
             */
            eventId: string;
            /**
             * @description Whether the endpoint answered 2xx, as a delivery would need
             * @example true
             */
            delivered: boolean;
            /**
             * @description The HTTP status the endpoint answered, when it answered
             * @example 204
             */
            statusCode?: number;
            /**
             * @description Why no answer was had (timeout, connection refused, address refused, ...)
             * @example connection refused
             */
            error?: string;
            /**
             * Format: date-time
             * @example 2026-11-24T09:30:01.250Z
             */
            attemptedAt: string;
            /** @example 84 */
            durationMs: number;
        };
        ResentWebhookDelivery: {
            /**
             * @description The `webhook-id` it is sent with again
             * @example evt_1842
             */
            eventId: string;
            /**
             * @example plant.created
             * @enum {string}
             */
            type: "plant.created" | "plant.deleted";
        };
        WebhookRecovery: {
            /**
             * Format: date-time
             * @description Recover the deliveries of events that occurred at or after this time (RFC 3339, with its time zone), within the last 7 days and not in the future.
             * @example 2026-11-24T09:00:00Z
             */
            since: string;
        };
        WebhookRecoveryStarted: {
            /**
             * Format: date-time
             * @description The deliveries of events from this time on that failed or were held are sent again
             * @example 2026-11-24T09:00:00.000Z
             */
            since: string;
        };
        WebhookAttempt: {
            /**
             * @description The `webhook-id` of the event: the same on every attempt and resend. `evt_<n>`, the id GET /events shows and every subscription of the user receives it with; `msg_<n>` for a delivery recorded before the service kept events
             * @example evt_1842
             */
            eventId: string;
            /**
             * @example plant.created
             * @enum {string}
             */
            type: "plant.created" | "plant.deleted";
            /**
             * @description 1 for the first attempt of the event
             * @example 1
             */
            attempt: number;
            /**
             * @description The HTTP status the endpoint answered, when it answered
             * @example 200
             */
            statusCode?: number;
            /**
             * @description Why no answer was had (timeout, connection refused, address refused, ...)
             * @example timeout after 10000 ms
             */
            error?: string;
            /**
             * Format: date-time
             * @example 2026-11-24T09:30:01.250Z
             */
            attemptedAt: string;
            /** @example 84 */
            durationMs: number;
        };
        Event: {
            /**
             * @description The event's id: the `webhook-id` its delivery to every subscription carries (on every attempt and resend)
             * @example evt_1842
             */
            id: string;
            /**
             * @example plant.created
             * @enum {string}
             */
            type: "plant.created" | "plant.deleted";
            /**
             * Format: date-time
             * @description When the change was committed, as the webhook's `timestamp`
             * @example 2026-11-24T09:30:00.123Z
             */
            timestamp: string;
            /** @description The webhook's `data`: PlantCreatedEventData for plant.created and PlantDeletedEventData for plant.deleted */
            data: components["schemas"]["PlantCreatedEventData"] | components["schemas"]["PlantDeletedEventData"];
        };
        PlantCreatedEventData: {
            /**
             * Format: int64
             * @description Identification number of the plant, chosen by the client and unique per user. Any signed 64-bit integer (-9223372036854775808 to 9223372036854775807), written as a JSON integer; it is kept exactly, also beyond 2^53.
             * @example 7
             */
            id: bigint;
            /**
             * @description The name of the plant: 1 to 255 characters, not only whitespace
             * @example Monstera deliciosa
             */
            name: string;
            /**
             * @description Tag that specifies the type: 1 to 64 characters; absent when the plant has none
             * @example tropical
             */
            tag?: string;
        };
        PlantCreatedEvent: {
            /**
             * @example plant.created
             * @enum {string}
             */
            type: "plant.created";
            /**
             * Format: date-time
             * @description When the change was committed
             * @example 2026-11-24T09:30:00.123Z
             */
            timestamp: string;
            /** @description The plant as created, as the API returns it (Plant) */
            data: components["schemas"]["PlantCreatedEventData"];
        };
        PlantDeletedEventData: {
            /**
             * Format: int64
             * @description Identification number of the plant, chosen by the client and unique per user. Any signed 64-bit integer (-9223372036854775808 to 9223372036854775807), written as a JSON integer; it is kept exactly, also beyond 2^53.
             * @example 7
             */
            id: bigint;
        };
        PlantDeletedEvent: {
            /**
             * @example plant.deleted
             * @enum {string}
             */
            type: "plant.deleted";
            /**
             * Format: date-time
             * @description When the change was committed
             * @example 2026-11-24T09:31:00.456Z
             */
            timestamp: string;
            data: components["schemas"]["PlantDeletedEventData"];
        };
        WebhookTestEventData: {
            /**
             * @description What the event is for: nothing changed, and nothing is to be done
             * @example A test of this endpoint, sent through POST /webhooks/{id}/test
             */
            message: string;
        };
        WebhookTestEvent: {
            /**
             * @example webhook.test
             * @enum {string}
             */
            type: "webhook.test";
            /**
             * Format: date-time
             * @description When the change was committed
             * @example 2026-11-24T09:29:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["WebhookTestEventData"];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description Requests left in the current window and seconds until it resets, e.g. `"default";r=0;t=42` */
        RateLimit: string;
        /** @description The limit: requests per window and the window in seconds, e.g. `"default";q=600;w=60` */
        "RateLimit-Policy": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    live: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /**
             * @description Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ready: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready for traffic */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /**
             * @description Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready: the message names what is down */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPlants: {
        parameters: {
            query?: {
                /** @description The maximum number of results to return in one page. A page never holds more than the server cap (PLANTS_MAX_PAGE, 1000 by default), also when limit is absent. */
                limit?: number;
                /** @description Cursor: return plants whose id is greater than this one. Clients normally follow the `Link: <...>; rel="next"` header rather than building it. */
                after?: bigint;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of plants */
            200: {
                headers: {
                    /** @description Present when more plants remain: `<?limit=N&after=ID>; rel="next"` (RFC 8288). The target is a relative reference holding only a query: resolved against the URL of this request (RFC 3986 §5), it is the same path with the query of the next page, so it stays under any path prefix a gateway serves the API at. */
                    Link?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plant"][];
                };
            };
            /**
             * @description Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPlant"];
            };
        };
        responses: {
            /** @description The plant as stored */
            200: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plant"];
                };
            };
            /**
             * @description Request body is not JSON text: malformed, or nested too deeply
             *
             *     An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description This user already has a plant with this id; the existing plant is unchanged
             *
             *     A request with the same Idempotency-Key is still in progress (retry later)
             */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Request body over 16 KiB
             *
             *     A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed
             */
            413: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body is not JSON */
            415: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePlant: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the plant to delete */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Plant deleted */
            204: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /**
             * @description An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such plant for this user (a plant of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A request with the same Idempotency-Key is still in progress (retry later) */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every subscription of the user */
            200: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"][];
                };
            };
            /**
             * @description More than one Authorization header
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            /** @description The subscription, with its signing secret */
            201: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedWebhook"];
                };
            };
            /**
             * @description Request body is not JSON text: malformed, or nested too deeply
             *
             *     An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The user already has 10 subscriptions
             *
             *     A request with the same Idempotency-Key is still in progress (retry later)
             */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Request body over 16 KiB
             *
             *     A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed
             */
            413: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body is not JSON */
            415: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The Idempotency-Key was already used for a different request by this user
             *
             *     The first request with this Idempotency-Key was processed, but its stored answer can no longer be given (it was sealed under a key the server no longer holds): look up what it created instead of retrying with this key
             */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Subscription deleted */
            204: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /**
             * @description An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A request with the same Idempotency-Key is still in progress (retry later) */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/merge-patch+json": components["schemas"]["WebhookChange"];
                "application/json": components["schemas"]["WebhookChange"];
            };
        };
        responses: {
            /** @description The subscription as changed */
            200: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /**
             * @description Request body is not JSON text: malformed, or nested too deeply
             *
             *     An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A request with the same Idempotency-Key is still in progress (retry later) */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Request body over 16 KiB
             *
             *     A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed
             */
            413: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body is not JSON */
            415: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WebhookSecretRotation"];
            };
        };
        responses: {
            /** @description The subscription, with its new signing secret */
            200: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedWebhook"];
                };
            };
            /**
             * @description Request body is not JSON text: malformed, or nested too deeply
             *
             *     An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A request with the same Idempotency-Key is still in progress (retry later) */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Request body over 16 KiB
             *
             *     A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed
             */
            413: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body is not JSON */
            415: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The Idempotency-Key was already used for a different request by this user
             *
             *     The first request with this Idempotency-Key was processed, but its stored answer can no longer be given (it was sealed under a key the server no longer holds): look up what it created instead of retrying with this key
             */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description How the endpoint took the test event */
            200: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookTestResult"];
                };
            };
            /**
             * @description An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description A test of this subscription is already running (retry once it has answered)
             *
             *     A request with the same Idempotency-Key is still in progress (retry later)
             */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resendWebhookDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
                /** @description The `webhook-id` of the delivery (`evt_<n>`, or `msg_<n>`), as GET /webhooks/{id}/deliveries and GET /events show it */
                eventId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery is due again */
            202: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ResentWebhookDelivery"];
                };
            };
            /**
             * @description An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     eventId is not a webhook-id: evt_ or msg_ and a number
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No such subscription for this user (one of another user is not told apart from a missing one)
             *
             *     No delivery of that event for this subscription (deliveries are kept 7 days)
             */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The subscription is disabled: re-enable it (`PATCH` with `enabled: true`) first
             *
             *     A request with the same Idempotency-Key is still in progress (retry later)
             */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    recoverWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with `Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host did not resolve. Without the field nothing is kept. See docs/api.md. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookRecovery"];
            };
        };
        responses: {
            /** @description The recovery has started */
            202: {
                headers: {
                    /** @description `true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, given again instead of processing the request twice (errors 4xx are replayed too) */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookRecoveryStarted"];
                };
            };
            /**
             * @description Request body is not JSON text: malformed, or nested too deeply
             *
             *     An invalid `Idempotency-Key`, or the field twice
             *
             *     Invalid request: the message names every problem
             *
             *     since is in the future, or more than 7 days ago
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description The subscription is disabled: re-enable it (`PATCH` with `enabled: true`) first
             *
             *     A request with the same Idempotency-Key is still in progress (retry later)
             */
            409: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Request body over 16 KiB
             *
             *     A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed
             */
            413: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body is not JSON */
            415: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The Idempotency-Key was already used for a different request by this user */
            422: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1) */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Recent attempts, newest first */
            200: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookAttempt"][];
                };
            };
            /**
             * @description Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     A path parameter that is not valid percent-encoding
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such subscription for this user (one of another user is not told apart from a missing one) */
            404: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description The most events in one page; a page never holds more than 1000, and holds 100 when limit is absent. */
                limit?: number;
                /** @description Cursor: the events after this event id, in the order asked for. Clients normally follow the `Link: <...>; rel="next"` header rather than building it. */
                after?: string;
                /** @description `desc`: newest first (the default); `asc`: oldest first, the order to reconcile in */
                order?: "asc" | "desc";
                /** @description Only events of this type */
                type?: "plant.created" | "plant.deleted";
                /** @description Only events that occurred at or after this time (RFC 3339); events are kept 7 days */
                since?: string;
                /** @description Only events that occurred before this time (RFC 3339) */
                until?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of events */
            200: {
                headers: {
                    /** @description Present when more events remain: `<?limit=N&order=desc&after=evt_ID...>; rel="next"` (RFC 8288), a relative reference holding only a query, resolved against the URL of this request as for `GET /plants`. */
                    Link?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Event"][];
                };
            };
            /**
             * @description Invalid request: the message names every problem
             *
             *     More than one Authorization header
             *
             *     Not a valid HTTP/1.1 request; the connection is then closed
             *
             *     An HTTP/1.1 request without a `Host` header; the connection is then closed
             */
            400: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description No bearer token
             *
             *     An unknown, malformed, expired or revoked token
             */
            401: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope this call needs */
            403: {
                headers: {
                    /** @description RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"` */
                    "WWW-Authenticate"?: string;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); the connection is then closed */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An `Expect` header other than `100-continue`; the connection is then closed */
            417: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds */
            429: {
                headers: {
                    /** @description Seconds until the next request is accepted */
                    "Retry-After"?: number;
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request line and headers over 16 KiB together; the connection is then closed */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unexpected failure; details are in the service log, never in the response */
            500: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)
             *
             *     The database is unavailable; retry later
             *
             *     An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later
             */
            503: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
