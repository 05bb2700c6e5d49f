import { examReportOf } from './exam';
import { ExamReportView } from './ExamReportView';

/** A turn's artifact: the exam's report as charts; any other declared output as its JSON. */
export function ArtifactView({ name, data, id }: { name: string; data: unknown; id: string }) {
  const report = examReportOf(data);
  if (report) return <ExamReportView report={report} id={id} />;
  return (
    <section class="artifact" aria-label={`Output of ${name}`}>
      <h3>Output of {name}</h3>
      <pre>{JSON.stringify(data, null, 2)}</pre>
    </section>
  );
}
