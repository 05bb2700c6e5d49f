import type { RecordedRequest } from '../test/support/fake-anthropic';

/** The `n` of examMessage(questions, n) in a request's first user message; undefined for any other conversation. */
export function examNumberOf(request: RecordedRequest): number | undefined {
  const first = request.body.messages[0] as { content: string | Array<{ type: string; text?: string }> } | undefined;
  if (!first) return undefined;
  const text =
    typeof first.content === 'string' ? first.content : first.content.map((block) => block.text ?? '').join('\n');
  const match = /\(#(\d+)\)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * The fake's requests of exams `first` to `first + count - 1`, one list per exam in the order they arrived: exams
 * running at once interleave their requests, so they are told apart by the number in their first message.
 */
export function requestsByExam(requests: RecordedRequest[], first: number, count: number): RecordedRequest[][] {
  const byExam: RecordedRequest[][] = Array.from({ length: count }, () => []);
  for (const request of requests) {
    const n = examNumberOf(request);
    if (n !== undefined && n >= first && n < first + count) byExam[n - first].push(request);
  }
  return byExam;
}
