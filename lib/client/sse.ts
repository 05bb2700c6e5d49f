/** Reads a `text/event-stream` body into messages: the `id:` (if any) and the JSON of `data:`. */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id?: string; data: unknown }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { id, data: JSON.parse(data.join('\n')) };
    }
  }
}
