import { conceptScores, type ExamReport, type QuestionResult } from './exam';

/**
 * The exam's report as pictures: the score as a ring, one square per question coloured by its result, a bar per
 * concept, the weak areas and the recommendation. Plain SVG (no chart library: four shapes do not need one), with a
 * title and description for screen readers and a table of the numbers beside each chart; prints as shown.
 */
export function ExamReportView({ report, id }: { report: ExamReport; id: string }) {
  const concepts = conceptScores(report.results);
  return (
    <section class="report" aria-labelledby={`${id}-title`} data-report="exam">
      <h3 id={`${id}-title`}>Exam report</h3>
      <div class="report-grid">
        <ScoreRing percent={report.scorePercent} id={`${id}-score`} />
        <div>
          <h4>Questions</h4>
          <QuestionStrip results={report.results} id={`${id}-questions`} />
          <Legend />
        </div>
      </div>
      <h4>By concept</h4>
      <ConceptBars concepts={concepts} id={`${id}-concepts`} />
      <div class="report-notes">
        <div>
          <h4>Weak areas</h4>
          {report.weakAreas.length > 0 ? (
            <ul>
              {report.weakAreas.map((area) => (
                <li key={area}>{area}</li>
              ))}
            </ul>
          ) : (
            <p>None: every concept at 80% or more.</p>
          )}
        </div>
        <div>
          <h4>Recommended next</h4>
          <p class="recommendation">{report.recommendation ?? 'No recommendation.'}</p>
        </div>
      </div>
      <details class="report-table">
        <summary>The numbers</summary>
        <table>
          <caption>Per-question results</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Concept</th>
              <th scope="col">Type</th>
              <th scope="col">Difficulty</th>
              <th scope="col">Result</th>
              <th scope="col">Points</th>
            </tr>
          </thead>
          <tbody>
            {report.results.map((result) => (
              <tr key={result.number}>
                <td>{result.number}</td>
                <td>{result.concept}</td>
                <td>{result.type}</td>
                <td>{result.difficulty}</td>
                <td>{result.result}</td>
                <td>{result.points}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}

function ScoreRing({ percent, id }: { percent: number; id: string }) {
  const radius = 52;
  const circumference = 2 * Math.PI * radius;
  const filled = (percent / 100) * circumference;
  return (
    <svg class="score-ring" viewBox="0 0 140 140" width="160" height="160" role="img" aria-labelledby={`${id}-t`}>
      <title id={`${id}-t`}>{`Score: ${percent}%`}</title>
      <circle class="ring-track" cx="70" cy="70" r={radius} />
      <circle
        class="ring-value"
        cx="70"
        cy="70"
        r={radius}
        stroke-dasharray={`${filled} ${circumference - filled}`}
        transform="rotate(-90 70 70)"
        data-score={percent}
      />
      <text x="70" y="78" text-anchor="middle" class="ring-text">
        {`${percent}%`}
      </text>
    </svg>
  );
}

function QuestionStrip({ results, id }: { results: QuestionResult[]; id: string }) {
  const size = 26;
  const perRow = 10;
  const rows = Math.max(1, Math.ceil(results.length / perRow));
  return (
    <svg
      class="question-strip"
      viewBox={`0 0 ${perRow * (size + 6)} ${rows * (size + 6)}`}
      width={perRow * (size + 6)}
      height={rows * (size + 6)}
      role="img"
      aria-labelledby={`${id}-t`}
    >
      <title id={`${id}-t`}>
        {results.map((result) => `question ${result.number}: ${result.result}`).join(', ') || 'No questions'}
      </title>
      {results.map((result, index) => (
        <g
          key={result.number}
          transform={`translate(${(index % perRow) * (size + 6)} ${Math.floor(index / perRow) * (size + 6)})`}
        >
          <rect
            class={`q ${result.result}`}
            width={size}
            height={size}
            rx="4"
            data-question={result.number}
            data-result={result.result}
          >
            <title>{`Question ${result.number} (${result.concept}): ${result.result}, ${result.points} point(s)`}</title>
          </rect>
          <text x={size / 2} y={size / 2 + 4} text-anchor="middle" class="q-label">
            {result.number}
          </text>
        </g>
      ))}
    </svg>
  );
}

function Legend() {
  return (
    <ul class="legend">
      {(['correct', 'partial', 'incorrect', 'unanswered'] as const).map((kind) => (
        <li key={kind}>
          <span class={`swatch ${kind}`} aria-hidden="true" /> {kind}
        </li>
      ))}
    </ul>
  );
}

function ConceptBars({ concepts, id }: { concepts: ReturnType<typeof conceptScores>; id: string }) {
  const rowHeight = 30;
  const labelWidth = 160;
  const barWidth = 320;
  const height = Math.max(1, concepts.length) * rowHeight;
  return (
    <svg
      class="concept-bars"
      viewBox={`0 0 ${labelWidth + barWidth + 60} ${height}`}
      width={labelWidth + barWidth + 60}
      height={height}
      role="img"
      aria-labelledby={`${id}-t`}
    >
      <title id={`${id}-t`}>
        {concepts.map((entry) => `${entry.concept}: ${entry.percent}% (${entry.mastery})`).join(', ') || 'No concepts'}
      </title>
      {concepts.map((entry, index) => (
        <g key={entry.concept} transform={`translate(0 ${index * rowHeight})`}>
          <text x={labelWidth - 8} y={rowHeight / 2 + 4} text-anchor="end" class="bar-label">
            {entry.concept}
          </text>
          <rect class="bar-track" x={labelWidth} y="6" width={barWidth} height={rowHeight - 12} rx="3" />
          <rect
            class={`bar ${entry.mastery}`}
            x={labelWidth}
            y="6"
            width={(entry.percent / 100) * barWidth}
            height={rowHeight - 12}
            rx="3"
            data-concept={entry.concept}
            data-percent={entry.percent}
          />
          <text x={labelWidth + barWidth + 8} y={rowHeight / 2 + 4} class="bar-value">
            {`${entry.percent}%`}
          </text>
        </g>
      ))}
    </svg>
  );
}
