import { z } from 'zod';

/**
 * The base URL of a service a sink sends a credential to (a CRM's `api_url`, a token endpoint's `token_url`,
 * docs/reference.md#crm-sinks): https, or plain http only to this machine (a local fake, a proxy on the host), so that
 * no token, client secret or signed grant crosses a network in the clear. `invalid` names what the option should be
 * when it is no http(s) URL at all.
 */
export function serviceUrl(option: string, invalid = `${option} must be an https:// URL`) {
  return z.url({ protocol: /^https?$/, error: invalid }).refine(
    (value) => {
      // zod runs this check even after the URL check failed; that failure is the one worth reporting.
      if (!URL.canParse(value)) return true;
      const { protocol, hostname } = new URL(value);
      return protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
    },
    { error: `${option} must be https:// (plain http only to localhost)` },
  );
}
