import readline from 'node:readline';
import { SkillflowApiError, type PendingCheckpoint, type StreamEvent, type TurnRequest } from '../lib/client';
import { answerFromLine, parseOverrides, promptFor } from './answers';
import { connect, explain } from './connect';
import type { CliIo } from './io';
import { describeCheckpoint, EventPrinter } from './render';

export interface ChatOptions {
  session?: string;
  skill?: string;
  json: boolean;
}

class Left extends Error {}

/**
 * `skillflow chat`: one session, one line per message. Streams each turn's events, and turns its checkpoints into
 * prompts. Rejoins a session with `--session`, including a turn waiting at a checkpoint. Ctrl-C (or the end of the
 * input while a turn waits) leaves the turn running and says how to rejoin.
 */
export async function chat(options: ChatOptions, io: CliIo): Promise<number> {
  const connection = connect(io.env, io.cwd);
  const { client } = connection;
  const out = options.json ? io.stderr : io.stdout;
  const printer = new EventPrinter(io.stdout);
  const reader = readline.createInterface({ input: io.stdin ?? process.stdin, terminal: false });
  const lines = reader[Symbol.asyncIterator]();
  const abort = new AbortController();
  let sessionId: string | undefined = options.session;
  const rejoinHint = () => (sessionId ? `Rejoin with: skillflow chat --session ${sessionId}\n` : '');
  const stopListening = io.onInterrupt?.(() => {
    abort.abort();
    printer.endLine();
    io.stderr(`\nLeft the session; a running turn keeps running. ${rejoinHint()}`);
    io.exit?.(130);
  });

  /** The next input line, echoed when the input is not a terminal so a transcript reads like a conversation. */
  const ask = async (prompt: string): Promise<string | null> => {
    out(prompt);
    const next = await lines.next();
    if (next.done) {
      out('\n');
      return null;
    }
    if (!io.stdinIsTTY) out(`${next.value}\n`);
    return next.value;
  };

  const answer = async (turnId: string, checkpoint: PendingCheckpoint): Promise<void> => {
    out(describeCheckpoint(checkpoint));
    for (;;) {
      const line = await ask(promptFor(checkpoint));
      if (line === null) throw new Left();
      let decision = answerFromLine(checkpoint, line);
      if (decision === 'modify') {
        const pairs: string[] = [];
        for (;;) {
          const pair = await ask('  key=value (empty line when done)> ');
          if (pair === null) throw new Left();
          if (pair.trim() === '') break;
          pairs.push(...pair.trim().split(/\s+(?=[^\s=]+=)/));
        }
        const overrides = parseOverrides(pairs);
        decision = typeof overrides === 'string' ? (out(`  ${overrides}\n`), null) : { action: 'modify', overrides };
      }
      if (decision === null) {
        out('  Not understood; try again.\n');
        continue;
      }
      try {
        await client.answerCheckpoint(turnId, checkpoint.id, decision);
        return;
      } catch (err) {
        if (!(err instanceof SkillflowApiError) || err.status !== 400) {
          if (err instanceof SkillflowApiError && err.code === 'checkpoint_not_pending')
            return void out('  Someone else answered it already.\n');
          throw err;
        }
        out(`  ${err.message}\n`);
      }
    }
  };

  const follow = async (turnId: string): Promise<void> => {
    for await (const event of client.followTurn(turnId, { signal: abort.signal })) {
      if (options.json) io.stdout(`${JSON.stringify(event)}\n`);
      else printer.print(event as StreamEvent);
      if (event.type === 'checkpoint.requested') {
        // Replayed events of a rejoined turn include checkpoints answered long ago: ask only for the pending one.
        const turn = await client.getTurn(turnId);
        if (turn.pendingCheckpoint?.id === event.checkpoint.id) await answer(turnId, turn.pendingCheckpoint);
      }
    }
  };

  try {
    if (sessionId) {
      const session = await client.getSession(sessionId);
      out(`Rejoined session ${sessionId} (${session.turnCount} turn${session.turnCount === 1 ? '' : 's'}).\n`);
      if (session.activeTurnId) await follow(session.activeTurnId);
    } else {
      sessionId = (await client.createSession()).id;
      out(`Session ${sessionId}. Type a message; Ctrl-D (end of input) or /quit ends. ${rejoinHint()}`);
    }
    let skill = options.skill;
    for (;;) {
      const line = await ask('you> ');
      if (line === null || line.trim() === '/quit') break;
      if (line.trim() === '') continue;
      const request: TurnRequest = { message: line, ...(skill ? { skill } : {}) };
      skill = undefined;
      const started = await client.startTurn(sessionId, request);
      await follow(started.id);
    }
    return 0;
  } catch (err) {
    if (err instanceof Left) {
      io.stderr(`The turn waits for your answer. ${rejoinHint()}`);
      return 0;
    }
    if (abort.signal.aborted) return 130;
    if (err instanceof SkillflowApiError && err.status === 404 && options.session) {
      io.stderr(
        `skillflow: session ${options.session} was not found (it may have been deleted, or belong to another user).\n`,
      );
      return 1;
    }
    io.stderr(`skillflow: ${explain(err, connection)}\n`);
    return 1;
  } finally {
    stopListening?.();
    // A terminal's input stays open after /quit or an error (only piped input ends): stop reading it, so the process can exit.
    reader.close();
  }
}
