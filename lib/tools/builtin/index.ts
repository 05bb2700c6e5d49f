import type { RegisteredTool } from '../define-tool';
import { calculator } from './calculator';
import { createHttpFetch, type HttpFetchOptions } from './http-fetch';

/** The built-in tools, safe by default (docs/tools.md): calculator, and http_fetch limited to the allowed hosts. */
export function builtinTools(
  httpFetch: HttpFetchOptions = { hosts: [], maxBytes: 262_144, timeoutMs: 10_000 },
): RegisteredTool[] {
  return [calculator, createHttpFetch(httpFetch)];
}
