import type { ChatMessage } from '../../core/messages';
import {
  carriedSkillReferences,
  conversationViewStart,
  defaultConversationBytes,
  modelCallReferences,
  objectsWithin,
  resolvedField,
  resolvedNote,
  type ModelCallReferences,
  type Resolved,
} from '../../core/payload-references';
import type { SkillRef, SkillSnapshot } from '../../core/skills/types';
import { restoreRepeated, type TranscriptDelta } from '../../core/transcript';
import type { SkillStore } from '../skills/skill-store';
import type { SharedStore } from '../store';
import type { RecentConversations } from './conversations';
import { readConversation, readPromptPart, TurnEntryError, turnScope } from '../store/turn-entries';

/** A payload as the codec protocol carries it: protobuf JSON, so `metadata` values and `data` are base64. */
export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
  [field: string]: unknown;
}

/** Where the content history names by reference is kept: the workers' shared store and their skill store. */
export interface CodecSources {
  store: SharedStore;
  /** How long the shared store keeps a turn's entries after its last write, for the note on a missing one. */
  storeRetentionHours: number;
  skills: SkillStore;
  /** Conversations rebuilt lately (lib/codec/conversations.ts); absent reads every conversation from its start. */
  recent?: RecentConversations;
  /**
   * The most of a model call's conversation shown whole, in bytes of JSON (SKILLFLOW_CODEC_CONVERSATION_BYTES): beyond
   * it, the earliest messages are left out (core/payload-references.ts `conversationViewStart`). Default 64 KiB.
   */
  conversationBytes?: number;
}

const jsonEncoding = 'json/plain';
const fromBase64 = (text: string) => Buffer.from(text, 'base64').toString('utf8');

/**
 * Decodes payloads for an operator: a JSON payload that names content by reference gets a `resolved` field with that
 * content (or, per reference, why it cannot be shown); every other payload is returned as it came, field for field.
 */
export async function decodePayloads(payloads: JsonPayload[], sources: CodecSources): Promise<JsonPayload[]> {
  // One after another: a turn's later call starts from the conversation its earlier one rebuilt.
  const decoded: JsonPayload[] = [];
  for (const payload of payloads) decoded.push(await decodePayload(payload, sources));
  return decoded;
}

async function decodePayload(payload: JsonPayload, sources: CodecSources): Promise<JsonPayload> {
  const value = jsonValueOf(payload);
  if (value === undefined) return payload;
  const call = modelCallReferences(value);
  // First, so that the UI's view of the input opens on what the call was sent.
  if (call) return withData(payload, { [resolvedField]: await resolveModelCall(call, sources), ...(value as object) });
  let changed = false;
  for (const object of objectsWithin(value)) {
    const skills = carriedSkillReferences(object);
    if (!skills) continue;
    object[resolvedField] = await resolveSkills(skills, sources.skills);
    changed = true;
  }
  return changed ? withData(payload, value) : payload;
}

const withData = (payload: JsonPayload, value: unknown): JsonPayload => ({
  ...payload,
  data: Buffer.from(JSON.stringify(value), 'utf8').toString('base64'),
});

/** The JSON value of a `json/plain` payload; undefined for any other encoding or data that is not JSON. */
function jsonValueOf(payload: JsonPayload): unknown {
  const encoding = payload.metadata?.encoding;
  if (typeof encoding !== 'string' || fromBase64(encoding) !== jsonEncoding || typeof payload.data !== 'string')
    return undefined;
  try {
    return JSON.parse(fromBase64(payload.data)) as unknown;
  } catch {
    return undefined;
  }
}

async function resolveModelCall(call: ModelCallReferences, sources: CodecSources) {
  const { store } = sources;
  const [system, tools, messages] = await Promise.all([
    call.system === undefined ? undefined : attempt(() => readPromptPart(store, call.turnId, call.system!), sources),
    call.tools === undefined ? undefined : attempt(() => readPromptPart(store, call.turnId, call.tools!), sources),
    call.delta === undefined ? undefined : attempt(() => conversationOf(sources, call.turnId, call.delta!), sources),
  ]);
  return {
    note: resolvedNote(`${store.description}, scope ${turnScope(call.turnId)}`),
    ...(system === undefined ? {} : { system }),
    ...(tools === undefined ? {} : { tools }),
    ...(messages === undefined
      ? {}
      : conversationView(messages, call.delta!.baseCount, sources.conversationBytes ?? defaultConversationBytes)),
  };
}

/**
 * The conversation as the codec shows it: whole, or without its earliest messages when it is over `budget` bytes,
 * saying so first. The UI decodes every call of a turn, and each call's conversation holds all earlier ones: whole,
 * a turn of hundreds of calls would come to hundreds of megabytes.
 */
function conversationView(messages: Resolved<ChatMessage[]>, addedFrom: number, budget: number) {
  if (!Array.isArray(messages)) return { messages };
  const sizes = messages.map((message) => Buffer.byteLength(JSON.stringify(message)));
  const start = conversationViewStart(sizes, addedFrom, budget);
  if (start === 0) return { messages };
  const bytes = sizes.slice(0, start).reduce((sum, size) => sum + size, 0);
  const note =
    `The first ${start} of this call's ${messages.length} messages (${bytes} bytes of JSON) are left out here, so that what the UI ` +
    `loads for a long turn stays in proportion to its calls (SKILLFLOW_CODEC_CONVERSATION_BYTES, ${budget}); "messages" begins at ` +
    `message ${start + 1}. Every message is shown whole in the input of the call that added it.`;
  return { omitted: { messages: start, bytes, note }, messages: messages.slice(start) };
}

/** The whole conversation the model saw: the one the delta extends, read back, plus what the delta adds. */
async function conversationOf(sources: CodecSources, turnId: string, delta: TranscriptDelta): Promise<ChatMessage[]> {
  const key = { count: delta.baseCount, digest: delta.baseDigest };
  const base = await readConversation(sources.store, turnId, key, sources.recent?.of(turnId));
  sources.recent?.keep(turnId, key, base);
  const conversation = [...base, ...delta.append];
  if (!delta.repeated || delta.repeated.length === 0) return conversation;
  const restored = restoreRepeated(conversation, delta.baseCount, delta.repeated);
  if (!restored)
    throw new TurnEntryError(
      'inconsistent',
      `A repeated tool result of turn ${turnId} names a content its conversation does not hold`,
    );
  return restored;
}

async function attempt<T>(read: () => Promise<T>, sources: CodecSources): Promise<Resolved<T>> {
  try {
    return await read();
  } catch (err) {
    const message = (err as Error).message;
    if (err instanceof TurnEntryError && err.problem === 'missing') {
      return {
        unavailable: `${message}. The store keeps a turn's entries for ${sources.storeRetentionHours} hours after its last model call (SKILLFLOW_STORE_RETENTION_HOURS).`,
      };
    }
    return { unavailable: `${message}.` };
  }
}

async function resolveSkills(refs: SkillRef[], skills: SkillStore) {
  const snapshots = await Promise.all(refs.map((ref) => snapshotOf(ref, skills)));
  return { note: resolvedNote(`the skill store in ${skills.dir}`), skills: snapshots };
}

async function snapshotOf(ref: SkillRef, skills: SkillStore): Promise<Resolved<SkillSnapshot>> {
  const snapshot = await skills.snapshot(ref.hash).catch(() => null);
  if (snapshot && snapshot.name === ref.name) return snapshot;
  return {
    unavailable:
      `The skill store in ${skills.dir} holds no version ${ref.hash} of skill "${ref.name}": the codec reads the workers' ` +
      'data dir (SKILLFLOW_DATA_DIR), where a worker keeps every skill version it pinned.',
  };
}
