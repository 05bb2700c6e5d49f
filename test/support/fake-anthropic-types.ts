/** The request and usage shapes of the fake Anthropic server, shared by it and its prompt cache. */
export interface ScriptedUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  messages: unknown[];
  stream?: boolean;
  system?: unknown;
  tools?: unknown[];
  thinking?: unknown;
  [key: string]: unknown;
}
