import {
  carriedSkillReferences,
  conversationViewStart,
  modelCallReferences,
  objectsWithin,
} from '../core/payload-references';

/** What the codec recognises as a reference, and what it leaves alone (core/payload-references.ts). */
const delta = { baseCount: 3, baseDigest: '0123456789abcdef', append: [{ role: 'user', content: 'next' }] };

describe('modelCallReferences', () => {
  it.each([
    [
      'prompt by digest',
      { turnId: 't-1', promptRefs: { system: 'aa', tools: 'bb' }, messages: [] },
      { turnId: 't-1', system: 'aa', tools: 'bb' },
    ],
    ['system only', { turnId: 't-1', promptRefs: { system: 'aa' }, tools: [] }, { turnId: 't-1', system: 'aa' }],
    ['a delta', { turnId: 't-1', system: [], delta }, { turnId: 't-1', delta }],
    ['both', { turnId: 't-1', promptRefs: { tools: 'bb' }, delta }, { turnId: 't-1', tools: 'bb', delta }],
    [
      'a delta with repeated results',
      { turnId: 't-1', delta: { ...delta, repeated: [{ message: 0, block: 0, digest: 'cc' }] } },
      { turnId: 't-1', delta: { ...delta, repeated: [{ message: 0, block: 0, digest: 'cc' }] } },
    ],
  ])('finds %s', (_name, value, expected) => {
    expect(modelCallReferences(value)).toEqual(expected);
  });

  it.each([
    ['a call sent whole', { turnId: 't-1', system: [], tools: [], messages: [] }],
    ['no turn id', { promptRefs: { system: 'aa' } }],
    ['an empty digest', { turnId: 't-1', promptRefs: { system: '' } }],
    ['a delta without its digest', { turnId: 't-1', delta: { baseCount: 3, append: [] } }],
    ['a delta whose count is not a whole number', { turnId: 't-1', delta: { ...delta, baseCount: 1.5 } }],
    ['an array', [{ turnId: 't-1', promptRefs: { system: 'aa' } }]],
    ['a string', 'turnId'],
    ['null', null],
  ])('leaves %s alone', (_name, value) => {
    expect(modelCallReferences(value)).toBeUndefined();
  });
});

describe('carriedSkillReferences', () => {
  const skills = [{ name: 'exam-mode-tuner', hash: 'a'.repeat(64) }];
  it.each([
    ['a carry of version 3', { version: 3, plan: null, route: null, skills, snapshots: [] }, skills],
    ['a carry of version 2 (snapshots whole)', { version: 2, plan: null, route: null, snapshots: [] }, undefined],
    ['no skills', { version: 3, skills: [], snapshots: [] }, undefined],
    ['a malformed reference', { version: 3, skills: [...skills, { name: 'x' }], snapshots: [] }, undefined],
    ['no snapshots field', { version: 3, skills }, undefined],
  ])('%s', (_name, value, expected) => {
    expect(carriedSkillReferences(value)).toEqual(expected);
  });
});

describe('objectsWithin', () => {
  it('lists every object of a JSON value, the value first, then depth first, up to a limit', () => {
    const inner = { c: 1 };
    const value = { a: [inner, 2, { d: { e: null } }], b: 'x' };
    expect(objectsWithin(value)).toEqual([value, inner, { d: { e: null } }, { e: null }]);
    expect(objectsWithin(value, 3)).toEqual([value, inner]);
    expect(objectsWithin('text')).toEqual([]);
  });
});

describe('conversationViewStart', () => {
  it.each([
    ['a conversation within the budget is shown whole', [10, 10, 10], 2, 30, 0],
    ['an empty conversation', [], 0, 30, 0],
    ['over the budget: the latest messages that fit', [10, 10, 10, 10], 4, 25, 2],
    ['never later than the message before those the call added', [10, 10, 10, 10], 2, 15, 1],
    [
      'added messages larger than the budget are still shown whole, with the response before them',
      [10, 10, 100, 100],
      2,
      50,
      1,
    ],
    ['a call that added the first message', [100, 10], 0, 20, 0],
    ['a base of one message: shown whole', [100, 10, 10], 1, 20, 0],
    ['a message that alone exceeds the budget stops the window there', [10, 100, 10, 10], 4, 50, 2],
    ['a base count past the end', [10, 10], 5, 5, 2],
  ])('%s', (_name, sizes, addedFrom, budget, expected) => {
    expect(conversationViewStart(sizes, addedFrom, budget)).toBe(expected);
  });
});
