import { useEffect, useState } from 'preact/hooks';
import type { SkillList } from '../../../lib/client';
import { fieldsToJsonSchema } from '../../../core/skills/json-schema';
import type { FieldSpec } from '../../../core/skills/types';
import { ApiError, apiPost, client, messageOf } from '../api';
import { draftsOf, fieldOfPath, valuesOf, type Drafts } from '../forms/drafts';
import { SchemaFields } from '../forms/SchemaFields';
import { go } from '../router';

type SkillSummary = SkillList['skills'][number];

/** The skills with their descriptions and parameters; a typed start from a form made of the parameters. */
export function Catalog() {
  const [skills, setSkills] = useState<SkillSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    client()
      .listSkills()
      .then((list) => setSkills(list.skills))
      .catch((err: unknown) => setError(messageOf(err)));
  }, []);
  return (
    <main id="main">
      <h1>Skills</h1>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {skills === null && !error ? <p role="status">Loading…</p> : null}
      <ul class="catalog">
        {(skills ?? []).map((skill) => (
          <li key={skill.name}>
            <SkillCard skill={skill} />
          </li>
        ))}
      </ul>
    </main>
  );
}

function SkillCard({ skill }: { skill: SkillSummary }) {
  const [open, setOpen] = useState(false);
  return (
    <article class="skill" aria-labelledby={`skill-${skill.name}`} data-skill={skill.name}>
      <h2 id={`skill-${skill.name}`}>{skill.name}</h2>
      <p class="muted">
        {[skill.category, skill.version ? `v${skill.version}` : null, ...skill.tags].filter(Boolean).join(' · ')}
      </p>
      <p>{skill.description}</p>
      {skill.parameters.length > 0 ? (
        <dl class="parameters">
          {skill.parameters.map((parameter) => (
            <div key={parameter.name}>
              <dt>
                <code>{parameter.name}</code>{' '}
                <span class="muted">
                  {parameter.type}
                  {parameter.required ? ', required' : ''}
                </span>
              </dt>
              <dd>{parameter.description}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p class="muted">No parameters.</p>
      )}
      {open ? (
        <StartForm skill={skill} onClose={() => setOpen(false)} />
      ) : (
        <button type="button" class="primary" onClick={() => setOpen(true)} aria-label={`Start ${skill.name}`}>
          Start…
        </button>
      )}
    </article>
  );
}

function StartForm({ skill, onClose }: { skill: SkillSummary; onClose: () => void }) {
  // The catalog lists parameters as skillflow.yaml declares them, whose types core/skills knows by name.
  const schema = fieldsToJsonSchema(skill.parameters as FieldSpec[]);
  const [drafts, setDrafts] = useState<Drafts>(() => draftsOf(schema, null));
  const [message, setMessage] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // One session for this form: a start the API refused is tried again in it, not in another new one.
  const [sessionId, setSessionId] = useState<string | null>(null);
  const id = `start-${skill.name}`;
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setProblem(null);
    try {
      const api = client();
      const session = sessionId ?? (await api.createSession({ idempotencyKey: crypto.randomUUID() })).id;
      setSessionId(session);
      await apiPost(
        `/v1/sessions/${encodeURIComponent(session)}/turns`,
        { message: message.trim() || `Start ${skill.name}.`, skill: skill.name, params: valuesOf(schema, drafts) },
        { 'idempotency-key': crypto.randomUUID() },
      );
      go({ view: 'session', id: session });
    } catch (err) {
      const onFields: Record<string, string> = {};
      for (const detail of err instanceof ApiError ? err.details : [])
        onFields[fieldOfPath(detail.path)] = detail.message;
      setErrors(onFields);
      setProblem(messageOf(err));
      setBusy(false);
    }
  }
  return (
    <form class="start-form" noValidate onSubmit={submit} aria-label={`Start ${skill.name}`}>
      <SchemaFields
        schema={schema}
        drafts={drafts}
        errors={errors}
        idPrefix={id}
        disabled={busy}
        onChange={(name, draft) => setDrafts({ ...drafts, [name]: draft })}
      />
      <div class="field">
        <label for={`${id}-message`}>Message (optional)</label>
        <textarea
          id={`${id}-message`}
          rows={2}
          value={message}
          onInput={(event) => setMessage((event.currentTarget as HTMLTextAreaElement).value)}
        />
      </div>
      {problem ? (
        <p class="form-error" role="alert">
          {problem}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Start {skill.name}
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
