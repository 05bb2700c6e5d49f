/** What a tool module imports (`import { defineTool, Type } from 'skillflow/tools'`): docs/tools.md. */
export { defineTool, StringEnum, ToolError, Type, type Static, type ToolContext, type ToolOutput } from './define-tool';
