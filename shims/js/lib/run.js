// What a shim reads from a `run` line and its own command line.

import { readFileSync } from 'node:fs';

/** `--native-retry`: keep the library's own retry defaults (the matrix's retry profile);
 * without it the library's retries are off, as in the content column. */
export const nativeRetry = process.argv.includes('--native-retry');

/** What a shim declares in its hello: `policy`, its library's default retry layer
 * (lib/retry-policies.js), when the run keeps the library's retries; null, none, when off. */
export const nativePolicy = (policy, native = nativeRetry) => (native ? policy : null);

export const idleMs = (run) => run.idle_timeout_s * 1000;
export const modelName = (run) => String(run.request.model ?? 'fake-model');
export const userMessages = (run) => (Array.isArray(run.request.messages) ? run.request.messages : []);
export const toolSchemas = (run) => (Array.isArray(run.request.tools) ? run.request.tools : []);

/** The version of an installed package, read from its own package.json. */
export function packageVersion(name) {
  const path = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(path, 'utf8')).version;
}
