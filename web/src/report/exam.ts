/**
 * The exam's report (exam-mode-tuner's declared output) read defensively: the artifact is the model's data, validated
 * against the skill's output schema, whose `results` entries are objects the schema does not detail further.
 */
export type ResultKind = 'correct' | 'partial' | 'incorrect' | 'unanswered';

export interface QuestionResult {
  number: number;
  concept: string;
  type: string;
  difficulty: string;
  result: ResultKind;
  points: number;
}

export interface ExamReport {
  scorePercent: number;
  results: QuestionResult[];
  weakAreas: string[];
  recommendation: string | null;
}

export interface ConceptScore {
  concept: string;
  points: number;
  questions: number;
  percent: number;
  mastery: 'strong' | 'developing' | 'weak';
}

const kinds: ResultKind[] = ['correct', 'partial', 'incorrect', 'unanswered'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The report in an artifact's data, or null when the data is not an exam report. */
export function examReportOf(data: unknown): ExamReport | null {
  if (!isRecord(data) || typeof data.score_percent !== 'number' || !Array.isArray(data.results)) return null;
  const results = data.results.filter(isRecord).map((entry, index): QuestionResult => ({
    number: typeof entry.number === 'number' ? entry.number : index + 1,
    concept: typeof entry.concept === 'string' ? entry.concept : 'other',
    type: typeof entry.type === 'string' ? entry.type : '',
    difficulty: typeof entry.difficulty === 'string' ? entry.difficulty : '',
    result: kinds.includes(entry.result as ResultKind) ? (entry.result as ResultKind) : 'unanswered',
    points: typeof entry.points === 'number' ? entry.points : 0,
  }));
  return {
    scorePercent: Math.max(0, Math.min(100, data.score_percent)),
    results,
    weakAreas: Array.isArray(data.weak_areas) ? data.weak_areas.filter((area) => typeof area === 'string') : [],
    recommendation: typeof data.recommendation === 'string' ? data.recommendation : null,
  };
}

/** Points over questions per concept, in the order concepts first appear; mastery as performance-analytics grades it. */
export function conceptScores(results: QuestionResult[]): ConceptScore[] {
  const byConcept = new Map<string, { points: number; questions: number }>();
  for (const result of results) {
    const entry = byConcept.get(result.concept) ?? { points: 0, questions: 0 };
    entry.points += result.points;
    entry.questions += 1;
    byConcept.set(result.concept, entry);
  }
  return [...byConcept].map(([concept, { points, questions }]) => {
    const percent = Math.round((points / questions) * 100);
    return {
      concept,
      points,
      questions,
      percent,
      mastery: percent >= 80 ? 'strong' : percent >= 50 ? 'developing' : 'weak',
    };
  });
}
