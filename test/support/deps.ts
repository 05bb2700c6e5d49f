import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities';
import type { SharedStore } from '../../lib/store';
import type { RegisteredTool } from '../../lib/tools/define-tool';
import { builtinTools } from '../../lib/tools/builtin';
import type { HttpFetchOptions } from '../../lib/tools/builtin/http-fetch';
import { ToolRegistry } from '../../lib/tools/registry';

export const bundledSkillsDir = path.resolve(__dirname, '..', '..', 'skills');

export interface TestDepsOptions {
  skillsDir?: string;
  dataDir?: string;
  /** Tools registered besides the built-ins. */
  tools?: RegisteredTool[];
  /** SKILLFLOW_DEFAULT_TOOLS of the worker: what the root turn offers. */
  rootGrants?: string[];
  httpFetch?: HttpFetchOptions;
  /** A registry of the test's own (e.g. with MCP tools); replaces tools, rootGrants and httpFetch. */
  registry?: ToolRegistry;
  /** Where the worker shares conversations with other workers; absent: its memory only. */
  store?: SharedStore;
}

/** Activity dependencies for a test worker: the fake model, a skills folder with a data dir of its own, the tools. */
export function testDeps(fakeUrl: string, options: TestDepsOptions = {}): ActivityDeps {
  return {
    model: {
      apiKey: 'test-key',
      baseURL: fakeUrl,
      model: 'claude-test',
      maxTokens: 1024,
      timeoutMs: 20_000,
      ...(options.store ? { store: options.store } : {}),
    },
    skills: {
      skillsDir: options.skillsDir ?? bundledSkillsDir,
      dataDir: options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-data-')),
    },
    tools: {
      registry:
        options.registry ??
        new ToolRegistry([...builtinTools(options.httpFetch), ...(options.tools ?? [])], options.rootGrants ?? []),
    },
  };
}
