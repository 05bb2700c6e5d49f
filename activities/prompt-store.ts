import type { TextBlock, ToolDefinition } from '../core/messages';
import type { ModelRequest } from '../core/model';
import { digestOf } from '../core/transcript';
import type { SharedStore } from '../lib/store';
import { promptEntry, readPromptPart, TurnEntryError, turnScope } from '../lib/store/turn-entries';
import { miss } from './transcript-store';

export interface Prompt {
  system: TextBlock[];
  tools: ToolDefinition[];
}

/**
 * The system prompt and tool definitions of a model call, which the turn sends whole once and then names by digest
 * (`ModelRequest.promptRefs`). A part sent whole is kept in this worker's memory and written to the shared store in its
 * turn's scope, so any worker resolves a digest; one it cannot resolve is a TranscriptMiss, and the turn sends the call
 * whole. A digest is only ever resolved within the turn that sent the part (turns with the same skills share the value
 * in memory, not the trust in a 64-bit digest).
 */
export class PromptStore {
  /** Parts by digest: few distinct ones (one per skill catalog and tool set), least recently used dropped first. */
  private readonly values = new Map<string, unknown>();
  /** `turnId/digest` of the parts each turn sent or resolved. */
  private readonly known = new Map<string, true>();

  constructor(
    private readonly shared: SharedStore | undefined,
    private readonly maxValues = 100,
    private readonly maxKnown = 2000,
  ) {}

  /** The call's system prompt and tools, whole or resolved from their digests. */
  async resolve(request: ModelRequest): Promise<Prompt> {
    const refs = request.promptRefs ?? {};
    const [system, tools] = await Promise.all([
      refs.system === undefined ? (request.system ?? []) : this.part<TextBlock[]>(request.turnId, refs.system),
      refs.tools === undefined ? (request.tools ?? []) : this.part<ToolDefinition[]>(request.turnId, refs.tools),
    ]);
    return { system, tools };
  }

  /** Keeps the parts the call carried whole, here and in the shared store; resolves (never rejects) once written or lost. */
  async share(request: ModelRequest, prompt: Prompt): Promise<void> {
    const refs = request.promptRefs ?? {};
    const whole = [
      refs.system === undefined ? prompt.system : undefined,
      refs.tools === undefined ? prompt.tools : undefined,
    ];
    await Promise.all(
      whole.map(async (value) => {
        if (value === undefined) return;
        const digest = digestOf(value);
        this.keep(request.turnId, digest, value);
        // A lost write only means another worker misses and the turn sends the prompt whole again.
        await this.shared
          ?.put(turnScope(request.turnId), promptEntry(digest), JSON.stringify(value))
          .catch(() => undefined);
      }),
    );
  }

  private async part<T>(turnId: string, digest: string): Promise<T> {
    const held = this.known.has(`${turnId}/${digest}`) ? this.values.get(digest) : undefined;
    if (held !== undefined) {
      this.keep(turnId, digest, held);
      return held as T;
    }
    if (!this.shared)
      throw miss(
        `This worker does not hold the prompt part ${digest} of turn ${turnId} and has no shared store; send it whole.`,
      );
    let value: unknown;
    try {
      value = await readPromptPart(this.shared, turnId, digest);
    } catch (err) {
      if (err instanceof TurnEntryError) throw miss(`${err.message}; send the prompt whole.`);
      throw err;
    }
    this.keep(turnId, digest, value);
    return value as T;
  }

  private keep(turnId: string, digest: string, value: unknown): void {
    touch(this.values, digest, this.values.get(digest) ?? value, this.maxValues);
    touch(this.known, `${turnId}/${digest}`, true, this.maxKnown);
  }
}

function touch<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as string);
}
