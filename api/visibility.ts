import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { TypedSearchAttributes } from '@temporalio/common';
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

const statusNames = ['UNSPECIFIED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'CONTINUED_AS_NEW', 'TIMED_OUT'];

/**
 * One page of a visibility query. The cursor is Temporal's page token, base64url: the query is rebuilt from the
 * caller's own filters on every page, so a tampered cursor cannot widen what the caller sees.
 */
export async function listPage(client: Client, query: string, limit: number, cursor?: string): Promise<{ executions: ListedExecution[]; nextCursor: string | null }> {
  let response;
  try {
    response = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      query,
      pageSize: limit,
      nextPageToken: cursor ? Buffer.from(cursor, 'base64url') : undefined,
    });
  } catch (err) {
    // INVALID_ARGUMENT from a cursor Temporal cannot read.
    if (cursor && (err as { code?: number }).code === 3) throw new HttpError(400, 'invalid_cursor', 'That cursor is not valid; start again without one.');
    throw err;
  }
  const token = response.nextPageToken;
  return {
    executions: (response.executions ?? []).map(fromRaw),
    nextCursor: token && token.length > 0 ? Buffer.from(token).toString('base64url') : null,
  };
}

/** Every execution matching the query (for housekeeping such as deleting a session), up to `max`. */
export async function listAll(client: Client, query: string, max = 10_000): Promise<ListedExecution[]> {
  const all: ListedExecution[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPage(client, query, 1000, cursor);
    all.push(...page.executions);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && all.length < max);
  return all;
}

/** A value for a visibility query; callers only pass values their schemas restricted to [A-Za-z0-9._@-]. */
export function quoted(value: string): string {
  if (!/^[A-Za-z0-9._@:-]*$/.test(value)) throw new HttpError(400, 'invalid_request', `Unexpected characters in ${JSON.stringify(value)}.`);
  return `'${value}'`;
}

type RawExecution = NonNullable<Awaited<ReturnType<Client['workflowService']['listWorkflowExecutions']>>['executions']>[number];

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
