import { Hono } from 'hono';
import { type EditableField, type EditValue, editableFields } from '../../admin/edit-rules.js';
import { CallhookError } from '../../errors.js';
import type { CallRecord } from '../../record.js';
import type { CallStatus } from '../../store/calls.js';
import { Note } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';

/**
 * `/ui/calls/<id>/edit` (docs/reference.md#editing-a-call): one field per declared parameter of the call's hook,
 * labelled with its identifier, prefilled with the value in `data` or, for a field with a problem, the value as
 * received (admin/edit-rules.ts editableFields). Saving goes through the same operation as `PATCH /admin/calls/<id>`,
 * so the values are normalised as at intake and the problems recomputed; saving never redelivers by itself: a held call
 * has "Save and release", a delivered one "Save and redeliver".
 */
export function editPage(ctx: WebContext): Hono<WebEnv> {
  const fieldsOf = (record: CallRecord) => {
    const hook = ctx.hooks.get(record.hook);
    if (!hook)
      throw new CallhookError(
        'CONFLICT',
        `call ${record.id} is of the hook ${record.hook}, which is not configured: its parameters are unknown`,
      );
    return editableFields(record, hook.parameters);
  };

  return (
    new Hono<WebEnv>()
      // The form is the operator's: a viewer is refused it, as the change it sends.
      .get('/:id/edit', ctx.allow('operator'), async (c) => {
        const call = await ctx.calls.showCall(c.req.param('id'));
        const view = ctx.shown({ record: call.record, status: call.status, fields: fieldsOf(call.record) });
        return c.render(<Edit {...view} />, { title: `Edit call ${call.record.id}`, section: 'calls' });
      })
      .post('/:id/edit', ctx.allow('operator'), async (c) => {
        const id = c.req.param('id');
        const ops = ctx.act(c);
        const { record } = await ctx.calls.showCall(id);
        const form = await c.req.parseBody();
        // Only the fields the operator changed: a field left as it was prefilled is no part of the edit.
        const data: Record<string, EditValue> = {};
        for (const field of fieldsOf(record)) {
          // A browser sends a text area's line ends as CRLF (HTML's form submission): read back as they were shown.
          const given = form[`field.${field.parameter.identifier}`];
          const text = typeof given === 'string' ? given.replace(/\r\n/g, '\n') : undefined;
          // Compared with the value as the form showed it: masked, were a secret in it (it stays as stored unless
          // changed).
          if (text !== undefined && text !== ctx.shown(prefilled(field))) data[field.parameter.identifier] = text;
        }
        const edited = Object.keys(data).length > 0 ? await ops.calls.editCall(id, { data }) : undefined;
        const changed = edited?.edit ? Object.keys(edited.edit.fields).length : 0;
        const then = form.then;
        if (then === 'release') {
          const { sinks } = await ops.calls.releaseCall(id);
          return c.redirect(
            `/ui/calls/${encodeURIComponent(id)}?done=edited-released&n=${sinks.length}&fields=${changed}`,
            303,
          );
        }
        if (then === 'redeliver') {
          const { scheduled } = await ops.calls.redeliverCall(id);
          return c.redirect(
            `/ui/calls/${encodeURIComponent(id)}?done=edited-redelivered&n=${scheduled}&fields=${changed}`,
            303,
          );
        }
        return c.redirect(`/ui/calls/${encodeURIComponent(id)}?done=edited&fields=${changed}`, 303);
      })
      .post('/:id/reviewed', ctx.allow('operator'), async (c) => {
        const id = c.req.param('id');
        await ctx.act(c).calls.markReviewed(id);
        return c.redirect(`/ui/calls/${encodeURIComponent(id)}?done=reviewed`, 303);
      })
  );
}

/** What a field's input holds when the form opens. */
function prefilled(field: EditableField): string {
  if (field.value === undefined || field.value === null) return '';
  return typeof field.value === 'string' ? field.value : JSON.stringify(field.value);
}

function Edit({ record, status, fields }: { record: CallRecord; status: CallStatus; fields: EditableField[] }) {
  const name = [record.data.first_name, record.data.last_name].filter((v) => v !== undefined && v !== '').join(' ');
  return (
    <>
      <h1>Edit call {name ? `from ${name}` : record.id}</h1>
      <p class="muted">
        Revision {record.revision}. Each value is normalised as at intake when it is saved, and its problem recomputed;
        the raw request never changes. <a href={`/ui/calls/${encodeURIComponent(record.id)}`}>Back to the call</a>
      </p>
      <form method="post" action={`/ui/calls/${encodeURIComponent(record.id)}/edit`} class="card">
        <div class="form-fields">
          {fields.map((field) => {
            const id = `field-${field.parameter.identifier}`;
            const about = field.problem || field.parameter.description ? `${id}-about` : undefined;
            const invalid = field.problem ? 'true' : undefined;
            return (
              <div>
                <label for={id}>
                  {field.parameter.identifier}
                  {field.parameter.required && <span class="muted"> (required)</span>}
                </label>
                {prefilled(field).length > 60 ? (
                  <textarea
                    id={id}
                    name={`field.${field.parameter.identifier}`}
                    rows={3}
                    aria-describedby={about}
                    aria-invalid={invalid}
                  >
                    {prefilled(field)}
                  </textarea>
                ) : (
                  <input
                    id={id}
                    name={`field.${field.parameter.identifier}`}
                    value={prefilled(field)}
                    inputmode={field.parameter.type === 'number' ? 'decimal' : undefined}
                    aria-describedby={about}
                    aria-invalid={invalid}
                  />
                )}
                {(field.problem || field.parameter.description) && (
                  <div id={`${id}-about`} class={field.problem ? 'problem' : 'muted'}>
                    {field.problem ? `${field.problem.code}: ${field.problem.message}` : field.parameter.description}
                  </div>
                )}
              </div>
            );
          })}
        </div>
        <div class="actions">
          <button type="submit" name="then" value="save" class={status === 'held' ? 'secondary' : ''}>
            Save
          </button>
          {status === 'held' ? (
            <button type="submit" name="then" value="release">
              Save and release
            </button>
          ) : (
            <button type="submit" name="then" value="redeliver" class="secondary">
              Save and redeliver
            </button>
          )}
        </div>
      </form>
      {fields.length === 0 && (
        <Note kind="info">The call's hook declares no parameters: there is nothing to edit.</Note>
      )}
    </>
  );
}
