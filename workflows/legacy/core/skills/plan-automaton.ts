import type { PlanNode, PlanSymbol } from './plan-ast';

/**
 * A plan compiled to a position automaton (Glushkov): every leaf of the plan is a position, and `follow` says which
 * positions may come right after each one. Plain JSON, so workflow code can keep it in its state.
 */
export interface PlanAutomaton {
  /** Position i is the i-th leaf of the plan, left to right. */
  symbols: PlanSymbol[];
  /** Positions allowed first. */
  first: number[];
  /** Positions allowed right after each position. */
  follow: number[][];
  /** Positions after which the plan may be complete. */
  last: number[];
  /** Whether the plan is complete before any step. */
  nullable: boolean;
}

/** Where a turn is in its plan: the positions allowed next, and whether the plan could end here. */
export interface PlanState {
  next: number[];
  complete: boolean;
}

interface Fragment {
  nullable: boolean;
  first: number[];
  last: number[];
}

const union = (a: number[], b: number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);

export function compilePlan(root: PlanNode): PlanAutomaton {
  const symbols: PlanSymbol[] = [];
  const follow: number[][] = [];
  const link = (from: number[], to: number[]) => from.forEach((p) => (follow[p] = union(follow[p], to)));

  const visit = (node: PlanNode): Fragment => {
    switch (node.kind) {
      case 'step':
      case 'checkpoint': {
        const position = symbols.length;
        symbols.push({ kind: node.kind, name: node.name });
        follow.push([]);
        return { nullable: false, first: [position], last: [position] };
      }
      case 'sequence':
        return node.items.map(visit).reduce((acc, next) => {
          link(acc.last, next.first);
          return {
            nullable: acc.nullable && next.nullable,
            first: acc.nullable ? union(acc.first, next.first) : acc.first,
            last: next.nullable ? union(acc.last, next.last) : next.last,
          };
        });
      case 'choice':
        return node.options.map(visit).reduce((acc, next) => ({
          nullable: acc.nullable || next.nullable,
          first: union(acc.first, next.first),
          last: union(acc.last, next.last),
        }));
      case 'optional':
        return { ...visit(node.item), nullable: true };
      case 'zeroOrMore':
      case 'oneOrMore': {
        const inner = visit(node.item);
        link(inner.last, inner.first);
        return { ...inner, nullable: node.kind === 'zeroOrMore' || inner.nullable };
      }
    }
  };

  const whole = visit(root);
  return { symbols, first: whole.first, follow, last: whole.last, nullable: whole.nullable };
}

export function startPlan(automaton: PlanAutomaton): PlanState {
  return { next: automaton.first, complete: automaton.nullable };
}

const sameSymbol = (a: PlanSymbol, b: PlanSymbol) => a.kind === b.kind && a.name === b.name;

/** The distinct steps and checkpoints the plan allows now, in plan order. */
export function allowedNext(automaton: PlanAutomaton, state: PlanState): PlanSymbol[] {
  const seen: PlanSymbol[] = [];
  for (const position of state.next) {
    const symbol = automaton.symbols[position];
    if (!seen.some((s) => sameSymbol(s, symbol))) seen.push(symbol);
  }
  return seen;
}

export function isAllowed(automaton: PlanAutomaton, state: PlanState, symbol: PlanSymbol): boolean {
  return state.next.some((p) => sameSymbol(automaton.symbols[p], symbol));
}

/** The state after the step is taken or the checkpoint resolved; null when the plan does not allow it now. */
export function advancePlan(automaton: PlanAutomaton, state: PlanState, symbol: PlanSymbol): PlanState | null {
  const matched = state.next.filter((p) => sameSymbol(automaton.symbols[p], symbol));
  if (matched.length === 0) return null;
  return {
    next: matched.map((p) => automaton.follow[p]).reduce(union, []),
    complete: matched.some((p) => automaton.last.includes(p)),
  };
}

/** The state in which only the given step is allowed (a deadline's `jump-to`); null when the plan has no such step. */
export function jumpToStep(automaton: PlanAutomaton, step: string): PlanState | null {
  const positions = automaton.symbols.flatMap((s, i) => (s.kind === 'step' && s.name === step ? [i] : []));
  return positions.length === 0 ? null : { next: positions, complete: false };
}

/** Whether `to` can come (directly or later) after some occurrence of `from`. */
export function canFollow(automaton: PlanAutomaton, from: PlanSymbol, to: PlanSymbol): boolean {
  const starts = automaton.symbols.flatMap((s, i) => (sameSymbol(s, from) ? [i] : []));
  const seen = new Set<number>();
  const queue = starts.flatMap((p) => automaton.follow[p]);
  while (queue.length > 0) {
    const position = queue.pop() as number;
    if (seen.has(position)) continue;
    seen.add(position);
    if (sameSymbol(automaton.symbols[position], to)) return true;
    queue.push(...automaton.follow[position]);
  }
  return false;
}
