import { InterceptingCall } from '@grpc/grpc-js';
import { Client, Connection, type ConnectionOptions, type WorkflowClientInterceptor } from '@temporalio/client';

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

/** How long answers to QueryWorkflow are held before the caller gets them (0: not held), as on a loaded worker. */
export interface QueryDelay {
  ms: number;
  /** While set, answers are held until it settles too: a read a test keeps in flight. */
  until?: Promise<void>;
  /** Told when an answer arrived from the server, before it is held. */
  onAnswer?: () => void;
}

/** Holds every QueryWorkflow answer for `delay.ms` (and until `delay.until` settles), read when the answer arrives. */
export function queryDelayInterceptor(delay: QueryDelay): Interceptor {
  return (options, nextCall) => {
    const call = nextCall(options) as unknown as InterceptingCall;
    if (!options.method_definition.path.endsWith('/QueryWorkflow')) return call as unknown as ReturnType<Interceptor>;
    return new InterceptingCall(call, {
      start(metadata, _listener, next) {
        next(metadata, {
          onReceiveMessage(message, nextMessage) {
            delay.onAnswer?.();
            const pass = () =>
              delay.ms === 0 ? nextMessage(message) : setTimeout(() => nextMessage(message), delay.ms);
            if (delay.until) void delay.until.then(pass);
            else pass();
          },
        });
      },
    }) as unknown as ReturnType<Interceptor>;
  };
}

/** Queries of one type in flight now, and the most at once since `max` was last set (a test resets it to `now`). */
export interface QueryLoad {
  now: number;
  max: number;
}

/**
 * A client on a connection of its own whose calls are counted in `calls`, its queries by query type (`turnState`,
 * `turnEvents`, `sessionState`) in `queries` and by type and workflow id (`turnEvents turn-...`) in `queriesOf`, and
 * those in flight at once by type in `load`; its describes by workflow id, counted as they are made, in `describesOf`;
 * its query answers wait `queryDelay.ms`. Close `connection` when done.
 */
export async function countedClient(address: string): Promise<{
  client: Client;
  connection: Connection;
  calls: Map<string, number>;
  queries: Map<string, number>;
  queriesOf: Map<string, number>;
  load: Map<string, QueryLoad>;
  describesOf: Map<string, number>;
  queryDelay: QueryDelay;
}> {
  const calls = new Map<string, number>();
  const queries = new Map<string, number>();
  const queriesOf = new Map<string, number>();
  const load = new Map<string, QueryLoad>();
  const describesOf = new Map<string, number>();
  const queryDelay: QueryDelay = { ms: 0 };
  const connection = await Connection.connect({
    address,
    interceptors: [countingInterceptor(calls), queryDelayInterceptor(queryDelay)],
  });
  const countQuery: WorkflowClientInterceptor = {
    query: async (input, next) => {
      queries.set(input.queryType, (queries.get(input.queryType) ?? 0) + 1);
      const of = `${input.queryType} ${input.workflowExecution.workflowId}`;
      queriesOf.set(of, (queriesOf.get(of) ?? 0) + 1);
      const inFlight = load.get(input.queryType) ?? { now: 0, max: 0 };
      load.set(input.queryType, inFlight);
      inFlight.now += 1;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      try {
        return await next(input);
      } finally {
        inFlight.now -= 1;
      }
    },
    describe: (input, next) => {
      describesOf.set(
        input.workflowExecution.workflowId,
        (describesOf.get(input.workflowExecution.workflowId) ?? 0) + 1,
      );
      return next(input);
    },
  };
  return {
    client: new Client({ connection, interceptors: { workflow: [countQuery] } }),
    connection,
    calls,
    queries,
    queriesOf,
    load,
    describesOf,
    queryDelay,
  };
}
