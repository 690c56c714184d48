import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeService, startFakeService } from './fakes/calling-service.js';
import { post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/** The tag-contact sink in a running receiver: every "callback requested" call lands in the follow-up tag. */

let service: FakeService;
let server: TestServer;
beforeAll(async () => {
  service = await startFakeService({ state: { tags: [{ id: 'follow-up', name: 'Follow-up' }] } });
  server = await startServer({
    config: {
      sinks: [
        { name: 'jsonl', type: 'jsonl' },
        {
          name: 'followup',
          type: 'tag-contact',
          api_url: service.baseUrl,
          api_key: service.apiKey,
          tag_id: 'follow-up',
          lead_status: 'open',
          when: { field: 'call_outcome', eq: 'callback requested' },
        },
      ],
    },
  });
});
afterAll(async () => {
  await server?.close();
  await service?.close();
});

it('adds the callers who asked for a callback to the tag, once each', async () => {
  const callback = sampleCall({
    first_name: 'Meera',
    phone_number: '098111 22233',
    call_outcome: 'Callback Requested',
    call_summary: 'Call back on Monday.',
  });
  for (const call of [callback, callback, sampleCall({ call_outcome: 'order placed' })])
    expect((await post(server.url, call)).status).toBe(200);
  const contacts = await until(() => service.state.tagContacts['follow-up']);
  expect(contacts).toEqual([
    expect.objectContaining({
      first_name: 'Meera',
      phone: '+919811122233',
      lead_status: 'open',
      description: 'Callback Requested — Call back on Monday.',
    }),
  ]);
  // The order stays out of the tag, and the duplicate webhook gave no second contact.
  await new Promise((r) => setTimeout(r, 300));
  expect(service.state.tagContacts['follow-up']).toHaveLength(1);
});
