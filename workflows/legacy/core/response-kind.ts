import { textOf, toolUsesOf, type ContentBlock } from './messages';
import type { ModelResponse } from './model';

/** What the loop does with one model response. */
export type ResponseKind =
  | 'tools' // run the tool calls, then call the model again
  | 'final' // the answer
  | 'empty' // neither text nor tool calls
  | 'truncated' // max_tokens: continue the answer
  | 'paused' // pause_turn: send the content back as is
  | 'refused'
  | 'context_exceeded';

export function responseKind(response: Pick<ModelResponse, 'content' | 'stopReason'>): ResponseKind {
  switch (response.stopReason) {
    case 'pause_turn':
      return 'paused';
    case 'refusal':
      return 'refused';
    case 'model_context_window_exceeded':
      return 'context_exceeded';
    case 'max_tokens':
      return 'truncated';
    default:
      if (toolUsesOf(response.content).length > 0) return 'tools';
      return textOf(response.content).trim() === '' ? 'empty' : 'final';
  }
}

/** A response cut by max_tokens may end in a tool call with partial input: keep only what is whole. */
export function completeBlocksOf(content: ContentBlock[]): ContentBlock[] {
  return content.filter((block) => block.type !== 'tool_use' && !(block.type === 'text' && block.text === ''));
}
