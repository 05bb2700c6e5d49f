/**
 * The parsed step plan (docs/skills.md, "The plan language"). Plain JSON: groups leave no node of their own, a
 * sequence or choice always has two or more members.
 */
export type PlanNode =
  | { kind: 'step'; name: string }
  | { kind: 'checkpoint'; name: string }
  | { kind: 'sequence'; items: PlanNode[] }
  | { kind: 'choice'; options: PlanNode[] }
  | { kind: 'optional'; item: PlanNode }
  | { kind: 'zeroOrMore'; item: PlanNode }
  | { kind: 'oneOrMore'; item: PlanNode };

/** A leaf of the plan: what the model does (load a subskill) or what a human resolves (a checkpoint). */
export interface PlanSymbol {
  kind: 'step' | 'checkpoint';
  name: string;
}

const quantifierOf = { optional: '?', zeroOrMore: '*', oneOrMore: '+' } as const;

/** The canonical text of a plan; parsing it gives the same tree back. */
export function formatPlan(node: PlanNode): string {
  switch (node.kind) {
    case 'step':
      return node.name;
    case 'checkpoint':
      return `checkpoint:${node.name}`;
    case 'sequence':
      return node.items.map((item) => (item.kind === 'choice' ? `(${formatPlan(item)})` : formatPlan(item))).join(' ');
    case 'choice':
      return node.options.map(formatPlan).join(' | ');
    case 'optional':
    case 'zeroOrMore':
    case 'oneOrMore': {
      const inner =
        node.item.kind === 'step' || node.item.kind === 'checkpoint'
          ? formatPlan(node.item)
          : `(${formatPlan(node.item)})`;
      return `${inner}${quantifierOf[node.kind]}`;
    }
  }
}

/** Every leaf, left to right, repeats included. */
export function planSymbols(node: PlanNode): PlanSymbol[] {
  switch (node.kind) {
    case 'step':
    case 'checkpoint':
      return [{ kind: node.kind, name: node.name }];
    case 'sequence':
      return node.items.flatMap(planSymbols);
    case 'choice':
      return node.options.flatMap(planSymbols);
    default:
      return planSymbols(node.item);
  }
}

export function distinctNames(node: PlanNode, kind: PlanSymbol['kind']): string[] {
  return [
    ...new Set(
      planSymbols(node)
        .filter((symbol) => symbol.kind === kind)
        .map((symbol) => symbol.name),
    ),
  ];
}
