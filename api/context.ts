import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';

/** What every route needs: one Temporal client per process and the validated configuration. */
export interface ApiContext {
  client: Client;
  config: Config;
}
