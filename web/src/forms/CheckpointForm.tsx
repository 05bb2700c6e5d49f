import { useState } from 'preact/hooks';
import type { PendingCheckpoint } from '../../../lib/client';
import { matchesLinkPattern } from '../../../core/links';
import { ApiError, apiPost, currentCredential, messageOf } from '../api';
import { Markdown } from '../conversation/Markdown';
import { Countdown } from './Countdown';
import { changedValues, draftsOf, fieldOfPath, propertiesOf, type Drafts } from './drafts';
import { SchemaFields } from './SchemaFields';

interface Props {
  turnId: string;
  checkpoint: PendingCheckpoint;
  /** Called once the API accepted the answer. */
  onAnswered?: () => void;
}

type Answer = { action: string; overrides?: Record<string, unknown>; note?: string; choice?: string; answer?: string };

/**
 * A checkpoint as a form: its summary, its params as typed fields (modify sends what changed, with a note in words),
 * route choices as buttons, a text answer for a question, cancel. A 400 puts each problem on the field it names; the
 * checkpoint stays until the API accepts an answer.
 */
export function CheckpointForm(props: Props) {
  const credential = currentCredential();
  const pattern = credential?.kind === 'link' ? credential.link.checkpoints : null;
  if (pattern !== null && !matchesLinkPattern(pattern, props.checkpoint.name))
    return <NotForThisLink checkpoint={props.checkpoint} pattern={pattern} />;
  return <AnswerForm {...props} />;
}

/** A checkpoint the page's answer link may not answer: shown, with who answers it, and no form. */
function NotForThisLink({ checkpoint, pattern }: { checkpoint: PendingCheckpoint; pattern: string }) {
  return (
    <div class="checkpoint waiting-for-other" data-checkpoint={checkpoint.name} data-outcome="not-for-this-link">
      <p class="checkpoint-title">
        <code>{checkpoint.name}</code> waits for someone else: this link answers only checkpoints named{' '}
        <code>{pattern}</code>.
      </p>
      <Markdown text={checkpoint.summary} class="summary" />
    </div>
  );
}

function AnswerForm({ turnId, checkpoint, onAnswered }: Props) {
  const [drafts, setDrafts] = useState<Drafts>(() => draftsOf(checkpoint.paramsSchema, checkpoint.params));
  const [note, setNote] = useState('');
  const [answer, setAnswer] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const actions = new Set(checkpoint.actions);
  const id = `cp-${turnId}-${checkpoint.id}`;
  const hasFields = actions.has('modify') && propertiesOf(checkpoint.paramsSchema).length > 0;
  const overrides = hasFields ? changedValues(checkpoint.paramsSchema, drafts, checkpoint.params) : {};
  const modifying = Object.keys(overrides).length > 0 || note.trim() !== '';

  async function send(body: Answer) {
    setSending(true);
    setProblem(null);
    setErrors({});
    try {
      await apiPost(`/v1/turns/${encodeURIComponent(turnId)}/checkpoints/${encodeURIComponent(checkpoint.id)}`, body);
      onAnswered?.();
    } catch (err) {
      const onFields: Record<string, string> = {};
      const elsewhere: string[] = [];
      for (const detail of err instanceof ApiError ? err.details : []) {
        const field = fieldOfPath(detail.path);
        if (field in drafts || field === 'note' || field === 'answer') onFields[field] = detail.message;
        else elsewhere.push(detail.message);
      }
      setErrors(onFields);
      setProblem(Object.keys(onFields).length > 0 && elsewhere.length === 0 ? null : messageOf(err));
      setSending(false);
    }
  }

  function submit(event: Event) {
    event.preventDefault();
    if (checkpoint.kind === 'question' && actions.has('answer')) return void send({ action: 'answer', answer });
    if (modifying && actions.has('modify')) {
      return void send({
        action: 'modify',
        ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
        ...(note.trim() !== '' ? { note: note.trim() } : {}),
      });
    }
    if (actions.has('approve')) void send({ action: 'approve' });
  }

  const submitLabel = checkpoint.kind === 'question' ? 'Send answer' : modifying ? 'Approve with changes' : 'Approve';
  const showSubmit = actions.has('answer') || actions.has('approve');
  return (
    <form
      class="checkpoint-form"
      noValidate
      onSubmit={submit}
      aria-labelledby={`${id}-title`}
      data-checkpoint={checkpoint.name}
    >
      <header>
        <h3 id={`${id}-title`}>
          {checkpoint.kind === 'question' ? 'Question' : 'Your decision'}: <code>{checkpoint.name}</code>
        </h3>
        {checkpoint.expiresAt ? <Countdown until={checkpoint.expiresAt} label="Time left to answer" /> : null}
      </header>
      <Markdown text={checkpoint.summary} class="summary" />
      {hasFields ? (
        <SchemaFields
          schema={checkpoint.paramsSchema}
          drafts={drafts}
          errors={errors}
          idPrefix={id}
          disabled={sending}
          onChange={(name, draft) => setDrafts({ ...drafts, [name]: draft })}
        />
      ) : null}
      {hasFields || (actions.has('modify') && checkpoint.kind === 'approval') ? (
        <div class={errors.note ? 'field invalid' : 'field'}>
          <label for={`${id}-note`}>Changes in your own words (optional)</label>
          <textarea
            id={`${id}-note`}
            rows={2}
            maxLength={4000}
            value={note}
            disabled={sending}
            aria-invalid={errors.note ? 'true' : undefined}
            aria-describedby={errors.note ? `${id}-note-error` : undefined}
            onInput={(event) => setNote((event.currentTarget as HTMLTextAreaElement).value)}
          />
          {errors.note ? (
            <p id={`${id}-note-error`} class="field-error">
              {errors.note}
            </p>
          ) : null}
        </div>
      ) : null}
      {checkpoint.kind === 'question' && actions.has('answer') ? (
        <div class={errors.answer ? 'field invalid' : 'field'}>
          <label for={`${id}-answer`}>Your answer</label>
          <textarea
            id={`${id}-answer`}
            rows={3}
            value={answer}
            disabled={sending}
            aria-invalid={errors.answer ? 'true' : undefined}
            aria-describedby={errors.answer ? `${id}-answer-error` : undefined}
            onInput={(event) => setAnswer((event.currentTarget as HTMLTextAreaElement).value)}
          />
          {errors.answer ? (
            <p id={`${id}-answer-error`} class="field-error">
              {errors.answer}
            </p>
          ) : null}
        </div>
      ) : null}
      {actions.has('choose') && checkpoint.options ? (
        <div class="routes" role="group" aria-label="Choices">
          {checkpoint.options.map((option) => (
            <button
              key={option}
              type="button"
              class="route"
              disabled={sending}
              onClick={() => void send({ action: 'choose', choice: option })}
            >
              {option}
            </button>
          ))}
        </div>
      ) : null}
      {problem ? (
        <p class="form-error" role="alert">
          {problem}
        </p>
      ) : null}
      <div class="actions">
        {showSubmit ? (
          <button type="submit" class="primary" disabled={sending}>
            {submitLabel}
          </button>
        ) : null}
        {actions.has('cancel') ? (
          confirmCancel ? (
            <>
              <button type="button" class="danger" disabled={sending} onClick={() => void send({ action: 'cancel' })}>
                Yes, cancel
              </button>
              <button type="button" onClick={() => setConfirmCancel(false)}>
                Keep going
              </button>
            </>
          ) : (
            <button type="button" disabled={sending} onClick={() => setConfirmCancel(true)}>
              Cancel…
            </button>
          )
        ) : null}
      </div>
    </form>
  );
}
