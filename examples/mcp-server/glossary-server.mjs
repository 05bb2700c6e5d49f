// A small MCP server over stdio: a course glossary the model can look terms up in.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const glossary = {
  photosynthesis: 'How plants turn light, water and carbon dioxide into sugar and oxygen.',
  mitochondrion: 'The part of a cell that releases energy from food.',
  osmosis: 'Water moving through a membrane from where there is less dissolved stuff to where there is more.',
};

const server = new McpServer({ name: 'glossary', version: '1.0.0' });
server.registerTool(
  'define',
  {
    description:
      "Look a term up in the course glossary. Answers with the course's own definition, or says the term is not in it.",
    inputSchema: { term: z.string().min(1).max(100) },
    annotations: { readOnlyHint: true },
  },
  async ({ term }) => {
    const definition = glossary[term.trim().toLowerCase()];
    return definition
      ? { content: [{ type: 'text', text: `${term}: ${definition}` }] }
      : {
          content: [
            {
              type: 'text',
              text: `${term} is not in the course glossary (${process.env.GLOSSARY_COURSE ?? 'no course'}).`,
            },
          ],
          isError: true,
        };
  },
);
await server.connect(new StdioServerTransport());
