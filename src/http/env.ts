import type { RequestIdVariables } from 'hono/request-id';

/** What a route leaves on the context for the one log line each request gets. */
export interface RequestSummary {
  hook?: string;
  outcome?: string;
  callId?: string;
}

export type AppEnv = { Variables: RequestIdVariables & { summary?: RequestSummary } };
