export { createClient, type CallingServiceClient, type CallOptions, type ClientOptions } from './client.js';
export { CallingServiceError } from './errors.js';
export * from './schemas.js';
