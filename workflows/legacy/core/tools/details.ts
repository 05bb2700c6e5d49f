import { digestOf } from '../transcript';
import type { ToolCatalog, ToolCatalogReference, ToolDetail, ToolHeader, ToolSpec } from './types';

/** The digest of a tool's detail: what a header names it by, and a worker checks the detail it holds against. */
export const detailDigestOf = (detail: ToolDetail): string =>
  digestOf({ description: detail.description, inputSchema: detail.inputSchema });

/** Whether a catalog is a run's reference to the worker's, rather than the whole catalog of older runs. */
export const isCatalogReference = (catalog: ToolCatalog | ToolCatalogReference): catalog is ToolCatalogReference =>
  'headers' in catalog;

/** Whether a spec carries its detail (engine tools, and registered tools as runs before the reference read them). */
export const hasDetail = (spec: ToolSpec | ToolHeader): spec is ToolSpec => 'inputSchema' in spec;

/** The header of a spec: the spec without its detail, and the detail's digest. */
export function headerOf(spec: ToolSpec): ToolHeader {
  const { description: _description, inputSchema: _inputSchema, ...header } = spec;
  return { ...header, detail: detailDigestOf(spec) };
}

/** A header with its detail: the whole spec again, as the run scopes and offers it. */
export function specOf(header: ToolHeader, detail: ToolDetail): ToolSpec {
  const { detail: _digest, ...rest } = header;
  return { ...rest, description: detail.description, inputSchema: detail.inputSchema };
}
