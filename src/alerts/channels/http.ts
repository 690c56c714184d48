import { z } from 'zod';
import {
  basicFromUserInfo,
  headers,
  oneAuthorization,
  secretBytes,
  setSignature,
  signingSecret,
} from '../../sinks/http/http.js';
import { sendRequest } from '../../sinks/shared/http-response.js';
import { dashboardLink } from '../message.js';
import { defineChannelType } from './channel.js';

/** A receiver that has not answered in this long will not; the message is tried again later. */
const TIMEOUT_MS = 15_000;

/**
 * A JSON POST of each message to a URL the operator owns (docs/reference.md#alerts), with the http sink's options under
 * its names and signed as its deliveries are (Standard Webhooks), so one receiver can check both alike. The body's
 * `type` is `incident.opened`, `incident.resolved` or `incident.test`; `webhook-id` and `Idempotency-Key` are the
 * incident's id and the kind, the same on every attempt of one message, so a receiver can drop repeats.
 */
export const httpChannel = defineChannelType({
  type: 'http',
  secretOptions: ['signing.secret'],
  options: z
    .strictObject({
      url: z.url({ protocol: /^https?$/, error: 'url must be an absolute http:// or https:// URL' }),
      headers: headers.default({}),
      signing: z.strictObject({ secret: signingSecret }).optional(),
    })
    .superRefine(oneAuthorization),
  open({ url: configuredUrl, headers: configured, signing }, { publicUrl }) {
    const key = signing ? secretBytes(signing.secret) : undefined;
    const { url, authorization } = basicFromUserInfo(configuredUrl);
    const link = dashboardLink(publicUrl);
    return {
      async send({ kind, incident }, { signal }) {
        // Serialised once: the signature covers these exact bytes.
        const body = JSON.stringify({
          type: `incident.${kind}`,
          incident: { ...incident, ...(link === undefined ? {} : { url: link }) },
        });
        const id = `${incident.id}:${kind}`;
        const sent = new Headers(configured);
        if (authorization) sent.set('authorization', authorization);
        if (!sent.has('user-agent')) sent.set('user-agent', 'callhook');
        sent.set('content-type', 'application/json');
        sent.set('idempotency-key', id);
        if (key) setSignature(sent, key, id, body);
        const response = await sendRequest(
          url,
          { method: 'POST', headers: sent, body },
          { signal, timeoutMs: TIMEOUT_MS },
        );
        await response.body?.cancel();
      },
    };
  },
});
