import { defineTool, StringEnum, Type } from 'skillflow/tools';

const wordsPerMinute = { child: 120, adult: 238, skimming: 450 } as const;

/** How long a text takes to read aloud or silently, for a reader of a kind: the model should not estimate it. */
export const readingTime = defineTool({
  name: 'reading_time',
  description:
    'Estimate how many minutes a text takes to read, for a kind of reader. Use it instead of estimating yourself.',
  category: 'text',
  input: Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: 200_000, description: 'The text to time' }),
      reader: Type.Optional(
        StringEnum(['child', 'adult', 'skimming'], { default: 'adult', description: 'Who reads it' }),
      ),
    },
    { additionalProperties: false },
  ),
  idempotent: true,
  timeout: '5s',
  run({ text, reader = 'adult' }) {
    const words = text.split(/\s+/).filter(Boolean).length;
    const minutes = words / wordsPerMinute[reader];
    return `${words} words: about ${minutes < 1 ? 'under a minute' : `${Math.round(minutes)} min`} (${reader} reader, ${wordsPerMinute[reader]} words a minute)`;
  },
});
