import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { TypedSearchAttributes } from '@temporalio/common';
import type { PageCursors } from './cursors';
import { HttpError } from './errors';

/** One execution as Temporal's visibility store lists it. */
export interface ListedExecution {
  workflowId: string;
  runId: string;
  type: string;
  /** As in describe(): RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  startTime: Date;
  closeTime?: Date;
  attributes: TypedSearchAttributes;
}

const statusNames = [
  'UNSPECIFIED',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TERMINATED',
  'CONTINUED_AS_NEW',
  'TIMED_OUT',
];

/** One page of a visibility query, with the cursor of the next one (signed: see PageCursors). */
export async function listPage(
  client: Client,
  cursors: PageCursors,
  query: string,
  limit: number,
  cursor?: string,
): Promise<{ executions: ListedExecution[]; nextCursor: string | null }> {
  const page = await rawPage(client, query, limit, cursor ? cursors.decode(cursor, query) : undefined);
  return { executions: page.executions, nextCursor: page.token ? cursors.encode(page.token, query) : null };
}

async function rawPage(client: Client, query: string, limit: number, token?: Uint8Array) {
  const response = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query,
    pageSize: limit,
    nextPageToken: token,
  });
  const next = response.nextPageToken;
  return { executions: (response.executions ?? []).map(fromRaw), token: next && next.length > 0 ? next : null };
}

/** Every execution matching the query (for housekeeping such as deleting a session), up to `max`. */
export async function listAll(client: Client, query: string, max = 10_000): Promise<ListedExecution[]> {
  const all: ListedExecution[] = [];
  let token: Uint8Array | undefined;
  do {
    const page = await rawPage(client, query, 1000, token);
    all.push(...page.executions);
    token = page.token ?? undefined;
  } while (token && all.length < max);
  return all;
}

/** A value for a visibility query; callers only pass values their schemas restricted to [A-Za-z0-9._@-]. */
export function quoted(value: string): string {
  if (!/^[A-Za-z0-9._@:-]*$/.test(value))
    throw new HttpError(400, 'invalid_request', `Unexpected characters in ${JSON.stringify(value)}.`);
  return `'${value}'`;
}

type RawExecution = NonNullable<
  Awaited<ReturnType<Client['workflowService']['listWorkflowExecutions']>>['executions']
>[number];

function fromRaw(raw: RawExecution): ListedExecution {
  return {
    workflowId: raw.execution?.workflowId ?? '',
    runId: raw.execution?.runId ?? '',
    type: raw.type?.name ?? '',
    status: statusNames[raw.status ?? 0] ?? 'UNSPECIFIED',
    startTime: optionalTsToDate(raw.startTime) ?? new Date(0),
    closeTime: optionalTsToDate(raw.closeTime),
    attributes: decodeTypedSearchAttributes(raw.searchAttributes?.indexedFields),
  };
}
