import { bundleWorkflowsApart } from '../worker/bundle-apart';

describe('the workflow bundle made in a child process (worker/main.ts)', () => {
  it('holds the workflows and the interceptor modules of a worker with tracing, as the in-process bundle would', async () => {
    const code = await bundleWorkflowsApart(true);
    expect(code).toContain('turnWorkflow');
    expect(code).toContain('workflows/log-attributes');
    expect(code).toContain('interceptors-opentelemetry/lib/workflow-interceptors');
  }, 180_000);
});
