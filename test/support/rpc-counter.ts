import { Client, Connection, type ConnectionOptions } from '@temporalio/client';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** Counts every gRPC call made through a connection, by method name (QueryWorkflow, DescribeWorkflowExecution...). */
export function countingInterceptor(counts: Map<string, number>): Interceptor {
  return (options, nextCall) => {
    const method = options.method_definition.path.split('/').pop() ?? '?';
    counts.set(method, (counts.get(method) ?? 0) + 1);
    // grpc-js uses what an interceptor returns only through the call interface, so the next call can go back as it is.
    return nextCall(options) as unknown as ReturnType<Interceptor>;
  };
}

/** A client on a connection of its own whose calls are counted in `calls`; close `connection` when done. */
export async function countedClient(address: string): Promise<{ client: Client; connection: Connection; calls: Map<string, number> }> {
  const calls = new Map<string, number>();
  const connection = await Connection.connect({ address, interceptors: [countingInterceptor(calls)] });
  return { client: new Client({ connection }), connection, calls };
}
