// An exam taken through the client package: node exam.mjs [topic]. Answers come from stdin, one line each.
import readline from 'node:readline';
import { SkillflowClient } from '@skillflow/client';

const client = new SkillflowClient({
  baseUrl: process.env.SKILLFLOW_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.SKILLFLOW_API_KEY,
});
const topic = process.argv[2] ?? 'data structures';
// Lines are buffered by the iterator, so answers piped in ahead of their questions are kept.
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function ask(prompt) {
  process.stdout.write(`${prompt}\n> `);
  const { value, done } = await lines.next();
  if (done) throw new Error('stdin ended before the exam did');
  return value.trim();
}

/** A checkpoint's answer: a question takes the text typed; settings and routes are approved or chosen. */
async function answer(checkpoint) {
  if (checkpoint.kind === 'question') return { action: 'answer', answer: await ask(checkpoint.summary) };
  if (checkpoint.options?.length) {
    const list = checkpoint.options.map((option, i) => `  ${i + 1}. ${option}`).join('\n');
    const picked = Number(await ask(`${checkpoint.summary}\n${list}\nNumber of your choice:`));
    return { action: 'choose', choice: checkpoint.options[picked - 1] ?? checkpoint.options[0] };
  }
  const params = checkpoint.params ? ` ${JSON.stringify(checkpoint.params)}` : '';
  const reply = await ask(`${checkpoint.summary}${params}\nApprove? (y/n)`);
  return { action: reply.toLowerCase().startsWith('n') ? 'cancel' : 'approve' };
}

const session = await client.createSession();
const started = await client.startTurn(session.id, {
  message: `Give me a practice exam on ${topic}.`,
  skill: 'exam-mode-tuner',
  params: { topic },
});
console.log(`Exam started: turn ${started.id}`);
for await (const event of client.followTurn(started.id)) {
  // `message` holds a round's whole text (`message.delta` events stream it as the model writes, for live display).
  if (event.type === 'message') console.log(event.text);
  if (event.type === 'checkpoint.requested') {
    await client.answerCheckpoint(started.id, event.checkpoint.id, await answer(event.checkpoint));
  }
}

const turn = await client.getTurn(started.id);
const report = turn.artifacts.find((artifact) => artifact.name === 'exam-mode-tuner')?.data;
console.log(`\nThe exam ended: ${turn.status}.`);
if (report) {
  console.log(`Score: ${report.score_percent}%`);
  for (const result of report.results) console.log(`  ${result.number}. ${result.concept}: ${result.result}`);
  console.log(`Weak areas: ${report.weak_areas.join(', ') || 'none'}. Next: ${report.recommendation}.`);
}
process.exit(turn.status === 'completed' ? 0 : 1);
