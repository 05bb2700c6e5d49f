import { describeCheckpoint, EventPrinter } from '../cli/render';
import type { PendingCheckpoint, StreamEvent } from '../lib/client';

/** How the CLI prints a turn whose skill runs (invoke_skill) emit their own events: indented by depth, named. */
describe("the CLI's event printer with skill runs", () => {
  it("indents a skill run's lines by its depth and names the speaker", () => {
    let out = '';
    const printer = new EventPrinter((text) => (out += text));
    const events = [
      { type: 'message.delta', text: 'Asking the writer.', call: '1' },
      { type: 'message', text: 'Asking the writer.' },
      {
        type: 'tool.start',
        name: 'simple-writing',
        args: {},
        callId: 't1',
        isSkill: true,
        depth: 1,
        input: { task: 'Write', params: { topic: 'x' } },
      },
      { type: 'message.delta', text: '{"title":', call: 'w#1', depth: 1 },
      { type: 'message.delta', text: '"Hi"}', call: 'w#1', depth: 1 },
      { type: 'message', text: '{"title":"Hi"}', depth: 1 },
      { type: 'tool.start', name: 'read_file', args: { path: 'a.md' }, callId: 't2', depth: 1 },
      { type: 'tool.end', name: 'read_file', result: 'no such file', callId: 't2', isError: true, depth: 1 },
      {
        type: 'tool.end',
        name: 'simple-writing',
        result: { success: true },
        callId: 't1',
        isError: false,
        isSkill: true,
        depth: 1,
      },
      { type: 'message', text: 'Done.' },
    ] as unknown as StreamEvent[];
    for (const event of events) printer.print(event);
    expect(out).toBe(
      [
        'assistant> Asking the writer.',
        '  - skill simple-writing (depth 1) {"task":"Write","params":{"topic":"x"}}',
        '  skill run> {"title":"Hi"}',
        '    - read_file {"path":"a.md"}',
        '    ! read_file failed: no such file',
        'assistant> Done.',
        '',
      ].join('\n'),
    );
  });

  it("prints a call a cancel cut as cancelled, and nothing for a cut checkpoint call (the turn's end says it)", () => {
    let out = '';
    const printer = new EventPrinter((text) => (out += text));
    const cut = { cancelled: 'turn cancelled' };
    const events = [
      {
        type: 'tool.start',
        name: 'checker',
        args: {},
        callId: 't1',
        isSkill: true,
        depth: 1,
        input: { task: 'Check', params: {} },
      },
      { type: 'tool.start', name: 'request_human_approval', args: {}, callId: 't2', depth: 1 },
      { type: 'tool.end', name: 'request_human_approval', result: cut, callId: 't2', isError: true, depth: 1 },
      { type: 'tool.end', name: 'checker', result: cut, callId: 't1', isError: true, isSkill: true, depth: 1 },
    ] as unknown as StreamEvent[];
    for (const event of events) printer.print(event);
    expect(out).toBe(
      ['  - skill checker (depth 1) {"task":"Check","params":{}}', '  ! checker cancelled', ''].join('\n'),
    );
  });

  it('says which skill run asked a checkpoint', () => {
    const checkpoint = {
      id: 'cp-3',
      name: 'confirm',
      kind: 'approval',
      summary: 'Confirm?',
      params: null,
      options: null,
      expiresAt: null,
      skill: 'checker',
      depth: 2,
    } as unknown as PendingCheckpoint;
    expect(describeCheckpoint(checkpoint)).toBe(
      '? Confirm?\n  (approval confirm, cp-3, asked by skill checker at depth 2)\n',
    );
    expect(describeCheckpoint({ ...checkpoint, depth: 0 })).toBe('? Confirm?\n  (approval confirm, cp-3)\n');
  });
});
