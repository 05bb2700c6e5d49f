import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { searchAttributeNames } from '../core/search-attributes';
import { ensureNamespaceSetup, foreignServerChanges } from '../lib/dev-server';

/** `npm start`'s set-up of a namespace, on a namespace of this test's own in the suite's dev server. */
describe('the namespace set-up npm start does', () => {
  let connection: Connection;
  const address = process.env.SKILLFLOW_TEST_TEMPORAL_ADDRESS!;

  beforeAll(async () => {
    connection = await Connection.connect({ address });
  });
  afterAll(() => connection.close());

  async function namespaceKeeping(days: number): Promise<string> {
    const namespace = `setup-${randomUUID()}`;
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(days * 86_400_000),
    });
    return namespace;
  }
  const retentionOf = async (namespace: string) =>
    Number(
      (await connection.workflowService.describeNamespace({ namespace })).config?.workflowExecutionRetentionTtl
        ?.seconds,
    ) / 86_400;

  it('on a server it did not start, keeps the retention and says what it registered and what it left', async () => {
    const namespace = await namespaceKeeping(3);
    const setup = await ensureNamespaceSetup(connection, namespace, 30, 'keep');
    expect(setup).toEqual({ addedSearchAttributes: searchAttributeNames, retentionDays: { before: 3, after: 3 } });
    expect(await retentionOf(namespace)).toBe(3);
    expect(foreignServerChanges(setup, address, namespace, 30)).toEqual([
      `Registered the search attributes skillflow needs on namespace ${namespace} at ${address}: ${searchAttributeNames.join(', ')} (Keyword).`,
      `Left the retention of namespace ${namespace} at ${address} at 3 days (SKILLFLOW_RETENTION_DAYS=30 applies to the dev server npm start runs). ` +
        `To change it: temporal operator namespace update --namespace ${namespace} --retention 720h`,
    ]);

    const again = await ensureNamespaceSetup(connection, namespace, 3, 'keep');
    expect(again).toEqual({ addedSearchAttributes: [], retentionDays: { before: 3, after: 3 } });
    expect(foreignServerChanges(again, address, namespace, 3)).toEqual([]);
  });

  it('on the dev server it started, sets the retention', async () => {
    const namespace = await namespaceKeeping(1);
    expect(await ensureNamespaceSetup(connection, namespace, 30, 'apply')).toEqual({
      addedSearchAttributes: searchAttributeNames,
      retentionDays: { before: 1, after: 30 },
    });
    expect(await retentionOf(namespace)).toBe(30);
  });
});
