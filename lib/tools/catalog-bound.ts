/** How large the tool catalog may grow unless configured (SKILLFLOW_TOOL_CATALOG_MAX_BYTES): the JSON of every spec. */
export const defaultMaxToolCatalogBytes = 512 * 1024;

/**
 * The highest bound the setting takes: a skill may grant every tool (`mcp:SERVER`), and the detail of the tools it
 * grants crosses workflow history (the readToolDetails activity's result, a model call's input) under Temporal's 2 MiB
 * payload limit, with room for the rest of a model call.
 */
export const maxToolCatalogBytesLimit = 1536 * 1024;

/** Bytes in KiB or MiB, for operators' messages. */
export function sizeOf(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}
