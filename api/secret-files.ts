/** The API's secrets (its generated key, the stream-token secret) are files of the data dir: see lib/secret-files.ts. */
export { readOrCreateSecretFile } from '../lib/secret-files';
