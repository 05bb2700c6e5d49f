import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { google } from '@temporalio/proto';
import { errorReply } from '../api/errors';
import { SkillflowClient } from '../lib/client';

/** A gRPC error as @grpc/grpc-js gives it, with Temporal's error detail when `detailType` is given. */
function grpcError(code: number, details: string, detailType?: string): Error {
  const status =
    detailType &&
    google.rpc.Status.encode({
      code,
      message: details,
      details: [{ type_url: `type.googleapis.com/${detailType}`, value: new Uint8Array() }],
    }).finish();
  // The part of grpc-js's Metadata the API reads.
  const metadata = { get: (key: string) => (status && key === 'grpc-status-details-bin' ? [Buffer.from(status)] : []) };
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

const update = (cause: Error) => new ServiceError('Workflow Update failed', { cause });
const notReady = 'temporal.api.errordetails.v1.WorkflowNotReadyFailure';

/** What Temporal answers while it cannot take a request is a 503 with retry-after, never a 500 (docs/api.md, errors). */
describe('Temporal errors a client can retry', () => {
  it.each([
    [
      'an update refused while the workflow task keeps failing',
      'busy',
      10,
      update(
        grpcError(9, 'Unable to perform workflow execution update due to Workflow Task in failed state.', notReady),
      ),
    ],
    [
      'an update call that timed out',
      'timeout',
      5,
      new WorkflowUpdateRPCTimeoutOrCancelledError('Workflow update call timeout or cancelled', {
        cause: grpcError(4, 'Deadline exceeded'),
      }),
    ],
    ['Temporal unreachable', 'unavailable', 5, update(grpcError(14, 'No connection established'))],
    ['a deadline exceeded', 'unavailable', 5, grpcError(4, 'Deadline exceeded')],
    [
      'Temporal overloaded, after the client retried',
      'unavailable',
      5,
      update(grpcError(8, 'namespace rate limit exceeded')),
    ],
  ])('%s: 503 %s, retry-after %i', (_case, code, retryAfterSeconds, error) => {
    expect(errorReply(error)).toMatchObject({
      status: 503,
      body: { error: { code } },
      retryAfterSeconds,
      unexpected: false,
    });
    expect(JSON.stringify(errorReply(error).body)).not.toMatch(/grpc|FAILED_PRECONDITION|Workflow Task/);
  });

  it('another failed precondition is still unexpected: 500 internal, logged', () => {
    expect(errorReply(update(grpcError(9, 'something else')))).toMatchObject({
      status: 500,
      body: { error: { code: 'internal' } },
      unexpected: true,
    });
    expect(errorReply(update(grpcError(9, 'something else')))).not.toHaveProperty('retryAfterSeconds');
  });
});

describe('the typed client', () => {
  it("gives a 503's retry-after to the caller", async () => {
    const reply = new Response(
      JSON.stringify({ error: { code: 'busy', message: 'Try again shortly.', requestId: 'r-1' } }),
      { status: 503, headers: { 'retry-after': '10' } },
    );
    const client = new SkillflowClient({ baseUrl: 'http://api.invalid', fetch: async () => reply });
    await expect(
      client.answerCheckpoint('turn-0123456789abcdef0123-1', 'cp-1', { action: 'approve' }, { idempotencyKey: 'k' }),
    ).rejects.toMatchObject({
      status: 503,
      code: 'busy',
      requestId: 'r-1',
      retryAfterSeconds: 10,
    });
  });
});
