import { type CompiledHook, canonicalJson, normalize, type Parameter } from '../normalize/index.js';
import type { CallRecord, Problem, Scalar } from '../record.js';
import type { CallEdit, FieldChange } from '../store/admin-queries.js';

/**
 * What an edit does to a record (docs/reference.md#editing-a-call), with no I/O: the fields named take their new
 * values, normalised with the hook's declared parameters exactly as intake normalises them (the same functions, the
 * config's phone region and date order, compiled into `parameters`), and each named field's problem is recomputed: a
 * field fixed loses its problem, a field set to something invalid gets one carrying the value as received, a required
 * field emptied is `missing_required`. Every other field, `extra`, the id, the dedup key and the source stay as they
 * are.
 */

/** A value an operator may give a field: JSON's scalars, and null (or "") to empty it. */
export type EditValue = string | number | boolean | null;

export interface EditResult {
  record: CallRecord;
  /** The entry for the history; undefined when no field ends up other than it was, and nothing is to be stored. */
  edit: CallEdit | undefined;
}

/** The fields `changes` names that the hook does not declare; an edit of them is refused (they are `extra`'s). */
export function undeclaredFields(changes: Record<string, EditValue>, parameters: CompiledHook): string[] {
  return Object.keys(changes).filter((field) => !parameters.declared.has(field));
}

/**
 * Applies `changes` (declared fields only: undeclaredFields first) to `record`, as of `at`. A field whose value and
 * problem come out as they were is not part of the edit; when none changes, the record is returned as it is.
 */
export function applyEdit(
  record: CallRecord,
  parameters: CompiledHook,
  changes: Record<string, EditValue>,
  at: Date,
): EditResult {
  const named = new Set(Object.keys(changes).filter((field) => parameters.declared.has(field)));
  // Normalised as intake does, all declared fields at once; only the named ones are read back.
  const fresh = normalize(Object.fromEntries([...named].map((field) => [field, changes[field]])), parameters);

  const fields: [string, FieldChange][] = [];
  for (const field of named) {
    const before = stateOf(record.data, record.problems, field);
    const after = stateOf(fresh.data, fresh.problems, field);
    if (before.code === after.code && sameValue(before, after)) continue;
    fields.push([field, { ...sideOf(before, 'before'), ...sideOf(after, 'after') }]);
  }
  if (fields.length === 0) return { record, edit: undefined };

  const changed = new Set(fields.map(([field]) => field));
  const source = (field: string) => (changed.has(field) ? fresh : record);
  // In the order of the declared parameters, as intake writes them; what the hook no longer declares comes after.
  const order = [
    ...parameters.parameters.map((p) => p.identifier),
    ...Object.keys(record.data),
    ...record.problems.map((p) => p.field),
  ];
  const data: [string, Scalar][] = [];
  const problems: Problem[] = [];
  for (const field of new Set(order)) {
    const { data: from, problems: of } = source(field);
    if (Object.hasOwn(from, field)) data.push([field, from[field]!]);
    problems.push(...of.filter((p) => p.field === field));
  }
  const revision = record.revision + 1;
  return {
    record: { ...record, revision, data: Object.fromEntries(data), problems },
    edit: { at: at.toISOString(), fields: Object.fromEntries(fields), revision },
  };
}

/**
 * One field of the edit form (docs/reference.md#editing-a-call): a declared parameter, its value now and its problem.
 */
export interface EditableField {
  parameter: Parameter;
  /** The value in `data`, or the value as received while the field has a problem; absent when it has none. */
  value?: unknown;
  problem?: Problem;
}

/**
 * The edit form's fields, one per declared parameter of the hook in declared order, prefilled as
 * docs/reference.md#editing-a-call says.
 */
export function editableFields(record: CallRecord, parameters: CompiledHook): EditableField[] {
  return parameters.parameters.map((parameter) => {
    const state = stateOf(record.data, record.problems, parameter.identifier);
    const problem = record.problems.find((p) => p.field === parameter.identifier);
    return { parameter, ...(state.has ? { value: state.value } : {}), ...(problem ? { problem } : {}) };
  });
}

/** A field's value (in `data`, or as received while it has a problem) and its problem's code; no value: absent. */
interface FieldState {
  has: boolean;
  value?: unknown;
  code?: Problem['code'];
}

function stateOf(data: Record<string, Scalar>, problems: readonly Problem[], field: string): FieldState {
  const problem = problems.find((p) => p.field === field);
  if (Object.hasOwn(data, field)) return { has: true, value: data[field], code: problem?.code };
  if (problem && Object.hasOwn(problem, 'value')) return { has: true, value: problem.value, code: problem.code };
  return { has: false, code: problem?.code };
}

const sameValue = (x: FieldState, y: FieldState) =>
  x.has === y.has && (!x.has || canonicalJson(x.value) === canonicalJson(y.value));

const sideOf = (state: FieldState, side: 'before' | 'after'): FieldChange => (state.has ? { [side]: state.value } : {});
