import { createHash } from 'node:crypto';
import type { MessagesRequestBody, ScriptedUsage } from './fake-anthropic-types';

/**
 * Prompt caching as the Anthropic API reports it in `usage`, simulated for the fake model so the benchmark can measure
 * the cache-read ratio. The prompt is the blocks in the API's order (tools, then system, then each message's content
 * blocks); a `cache_control` on a block is a breakpoint. A breakpoint whose prefix is long enough is written to the
 * cache; a later request reads the longest cached prefix found at a breakpoint or up to `lookbackBlocks` blocks before
 * one (the API's automatic look-back). Tokens are estimated as characters / 4 of each block's JSON without its
 * `cache_control`. What is read is `cache_read_input_tokens`, what is written beyond it up to the last breakpoint is
 * `cache_creation_input_tokens`, and the rest is `input_tokens`. Entries never expire (the benchmark runs minutes).
 */
export interface PromptCacheOptions {
  /** Prefixes shorter than this are not cached (the API's minimum is 1,024-4,096 tokens, by model). */
  minTokens?: number;
  /** How many blocks before a breakpoint the API looks for an earlier cache entry (20). */
  lookbackBlocks?: number;
}

interface Block {
  tokens: number;
  breakpoint: boolean;
  text: string;
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

function blockOf(value: unknown): Block {
  const { cache_control: mark, ...rest } = (
    typeof value === 'object' && value !== null ? value : { text: value }
  ) as Record<string, unknown>;
  const text = JSON.stringify(rest);
  return { tokens: estimateTokens(text), breakpoint: mark !== undefined, text };
}

function blocksOf(body: MessagesRequestBody): Block[] {
  const blocks: Block[] = (body.tools ?? []).map(blockOf);
  const system = body.system;
  if (typeof system === 'string') blocks.push(blockOf({ type: 'text', text: system }));
  else if (Array.isArray(system)) blocks.push(...system.map(blockOf));
  for (const message of body.messages as Array<{ role: string; content: unknown }>) {
    const content =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as unknown[]);
    // The role is part of what is cached: the same text as user and as assistant is not the same prefix.
    blocks.push(...content.map((block) => ({ ...blockOf(block), text: `${message.role}:${blockOf(block).text}` })));
  }
  return blocks;
}

export class PromptCache {
  private readonly entries = new Set<string>();
  private readonly minTokens: number;
  private readonly lookback: number;

  constructor(options: PromptCacheOptions = {}) {
    this.minTokens = options.minTokens ?? 1024;
    this.lookback = options.lookbackBlocks ?? 20;
  }

  /** The usage of one request, and the cache entries it writes. */
  usageOf(
    body: MessagesRequestBody,
  ): Required<Pick<ScriptedUsage, 'input_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens'>> {
    const blocks = blocksOf(body);
    const hash = createHash('sha256');
    const prefixes: Array<{ key: string; tokens: number }> = [];
    let tokens = 0;
    for (const block of blocks) {
      hash.update(block.text).update('\n');
      tokens += block.tokens;
      prefixes.push({ key: hash.copy().digest('hex'), tokens });
    }
    const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));
    let read = 0;
    for (const at of breakpoints) {
      for (let i = at; i >= Math.max(0, at - this.lookback); i--) {
        if (this.entries.has(prefixes[i].key)) {
          read = Math.max(read, prefixes[i].tokens);
          break;
        }
      }
    }
    let cachedUpTo = read;
    for (const at of breakpoints) {
      if (prefixes[at].tokens < this.minTokens) continue;
      this.entries.add(prefixes[at].key);
      cachedUpTo = Math.max(cachedUpTo, prefixes[at].tokens);
    }
    return {
      cache_read_input_tokens: read,
      cache_creation_input_tokens: cachedUpTo - read,
      input_tokens: tokens - cachedUpTo,
    };
  }
}
