import type { JsonSchema } from '../../../core/json-validator';
import { fieldKind, propertiesOf, type Draft, type Drafts } from './drafts';

interface FieldsProps {
  schema: JsonSchema | null | undefined;
  drafts: Drafts;
  onChange: (name: string, draft: Draft) => void;
  /** Problems by field name, as the API named them. */
  errors: Record<string, string>;
  /** Keeps the ids of two forms on one page apart. */
  idPrefix: string;
  disabled?: boolean;
}

const labelOf = (name: string) => name.replace(/_/g, ' ');

/** One labelled input per property of the schema, typed by it: bounds, enums, defaults; errors on their field. */
export function SchemaFields({ schema, drafts, onChange, errors, idPrefix, disabled }: FieldsProps) {
  const required = new Set(schema?.required ?? []);
  return (
    <div class="fields">
      {propertiesOf(schema).map(([name, field]) => (
        <Field
          key={name}
          id={`${idPrefix}-${name}`}
          name={name}
          schema={field}
          required={required.has(name)}
          draft={drafts[name]}
          error={errors[name]}
          disabled={disabled}
          onChange={(draft) => onChange(name, draft)}
        />
      ))}
    </div>
  );
}

interface FieldProps {
  id: string;
  name: string;
  schema: JsonSchema;
  required: boolean;
  draft: Draft | undefined;
  error?: string;
  disabled?: boolean;
  onChange: (draft: Draft) => void;
}

function hintOf(schema: JsonSchema): string {
  const parts = [schema.description ?? ''];
  if (schema.minimum !== undefined && schema.maximum !== undefined)
    parts.push(`From ${schema.minimum} to ${schema.maximum}.`);
  else if (schema.minimum !== undefined) parts.push(`At least ${schema.minimum}.`);
  else if (schema.maximum !== undefined) parts.push(`At most ${schema.maximum}.`);
  if (fieldKind(schema) === 'list') parts.push('Separate items with commas.');
  if (fieldKind(schema) === 'json') parts.push('JSON.');
  return parts.filter((part) => part !== '').join(' ');
}

function Field(props: FieldProps) {
  const { id, name, schema, required, error } = props;
  const hint = hintOf(schema);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const kind = fieldKind(schema);
  const label = (
    <>
      {labelOf(name)}
      {required ? <span class="required"> (required)</span> : null}
    </>
  );
  const notes = (
    <>
      {hint ? (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      ) : null}
    </>
  );
  if (kind === 'choices') {
    return (
      <fieldset class={error ? 'field invalid' : 'field'} aria-describedby={described} data-field={name}>
        <legend>{label}</legend>
        <div class="choices">
          {(schema.items!.enum ?? []).map((option) => {
            const text = String(option);
            const chosen = Array.isArray(props.draft) && props.draft.includes(text);
            return (
              <label key={text} class="choice">
                <input
                  type="checkbox"
                  name={name}
                  value={text}
                  checked={chosen}
                  disabled={props.disabled}
                  onChange={(event) => {
                    const current = Array.isArray(props.draft) ? props.draft : [];
                    const on = (event.currentTarget as HTMLInputElement).checked;
                    props.onChange(on ? [...current, text] : current.filter((item) => item !== text));
                  }}
                />{' '}
                {text}
              </label>
            );
          })}
        </div>
        {notes}
      </fieldset>
    );
  }
  return (
    <div class={error ? 'field invalid' : 'field'} data-field={name}>
      {kind === 'boolean' ? (
        <label class="choice" for={id}>
          <Input {...props} kind={kind} described={described} /> {label}
        </label>
      ) : (
        <>
          <label for={id}>{label}</label>
          <Input {...props} kind={kind} described={described} />
        </>
      )}
      {notes}
    </div>
  );
}

function Input(props: FieldProps & { kind: ReturnType<typeof fieldKind>; described?: string }) {
  const { id, name, schema, kind, draft, disabled, described, error, required } = props;
  const common = {
    id,
    name,
    disabled,
    'aria-describedby': described,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-required': required ? ('true' as const) : undefined,
  };
  const text = typeof draft === 'string' ? draft : '';
  const onText = (event: Event) => props.onChange((event.currentTarget as HTMLInputElement).value);
  switch (kind) {
    case 'enum':
      return (
        <select {...common} value={text} onChange={onText}>
          {required ? null : <option value="">(none)</option>}
          {(schema.enum ?? []).map((option) => (
            <option key={String(option)} value={String(option)}>
              {String(option)}
            </option>
          ))}
        </select>
      );
    case 'number':
      return (
        <input
          {...common}
          type="number"
          inputMode={schema.type === 'integer' ? 'numeric' : 'decimal'}
          min={schema.minimum}
          max={schema.maximum}
          step={schema.type === 'integer' ? 1 : 'any'}
          value={text}
          onInput={onText}
        />
      );
    case 'boolean':
      return (
        <input
          {...common}
          type="checkbox"
          checked={draft === true}
          onChange={(event) => props.onChange((event.currentTarget as HTMLInputElement).checked)}
        />
      );
    case 'json':
      return <textarea {...common} rows={4} value={text} onInput={onText} />;
    default:
      return (
        <input {...common} type="text" maxLength={schema.maxLength} value={text} onInput={onText} autoComplete="off" />
      );
  }
}
