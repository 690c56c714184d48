export { type CallingServiceClient, type CallOptions, type ClientOptions, createClient } from './client.js';
export { CallingServiceError } from './errors.js';
export * from './schemas.js';
