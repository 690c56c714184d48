import { z } from 'zod';
import type { CallRecord } from '../../record.js';
import { compileTextTemplate, type TextTemplate, templateParts } from '../shared/template.js';

/**
 * The `subject` option of the nats sink (docs/reference.md#queues-and-databases): a template, `callhook.calls.{{ hook
 * }}` by default, checked at start-up so that every record renders to a subject one can publish to, and turned into the
 * subject filter of a stream callhook creates (each `{{ … }}` as `*`).
 */

export const DEFAULT_SUBJECT = 'callhook.calls.{{ hook }}';

/**
 * The roots a subject may name: each renders one token that is always a valid subject token (a hook name is lowercase
 * letters, digits, - and _ by config.ts; an id is a UUID; a source is one word; a revision a number; a platform, once
 * other voice platforms' calls arrive, one of `vapi`, `retell`, `elevenlabs`). A data or extra field, dedup_key or
 * received_at may not: a caller's words hold spaces and dots, and a dot makes more tokens than the stream filter's `*`
 * matches, so the stream would never hear the subject and the call would go dead over a word the caller said. Routing
 * on content belongs to `when` and a second sink.
 *
 * `platform` is the one that can be missing (a hook of the spec's own calling service names none, section 13),
 * and a missing value renders as empty text (section 9), which is no subject token: such a delivery is dead at
 * once, saying so (`Subject.empty`), rather than published under a made-up token a consumer cannot tell from a
 * platform's. A config that routes by platform filters those calls out with `when`.
 */
const SUBJECT_ROOTS = ['hook', 'id', 'source', 'revision', 'platform'];

export interface Subject {
  /** The subject for one record. */
  render: TextTemplate;
  /** The subject filter of a stream created for it: each placeholder as the one-token wildcard `*`. */
  filter: string;
  /** True when every placeholder fills a whole token, so that `filter` matches every subject rendered. */
  wholeTokens: boolean;
  /** The first placeholder's path that renders nothing for this record (a call with no `platform`), if any. */
  empty: (record: CallRecord) => string | undefined;
}

/**
 * Why a subject is no subject one can publish to, or undefined when it is one. NATS subjects are tokens
 * separated by `.`, with no whitespace, no empty token, and no wildcard (`*`, `>`) when publishing
 * (https://docs.nats.io/nats-concepts/subjects).
 */
export function publishSubjectProblem(subject: string): string | undefined {
  if (subject === '') return 'is empty';
  if (/\s/.test(subject)) return 'holds whitespace';
  const tokens = subject.split('.');
  if (tokens.some((token) => token === '')) return 'has an empty token (a leading, trailing or doubled dot)';
  if (tokens.some((token) => token === '*' || token === '>'))
    return 'has a wildcard token (* or >), which one can only subscribe to';
  return undefined;
}

export const subjectSchema = z
  .string()
  .default(DEFAULT_SUBJECT)
  .transform((text, ctx): Subject => {
    let render: TextTemplate;
    try {
      render = compileTextTemplate(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
    const { texts, paths } = templateParts(text);
    const other = paths.find((path) => !SUBJECT_ROOTS.includes(path));
    if (other !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `{{ ${other} }} may render text that is no subject token (spaces, dots); a subject may name ${SUBJECT_ROOTS.join(', ')}`,
      });
      return z.NEVER;
    }
    // The text around the placeholders must make a subject whatever they render: try it with a plain token.
    const problem = publishSubjectProblem(texts.join('x'));
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', message: `"${text}" ${problem}` });
      return z.NEVER;
    }
    const wholeTokens = paths.every((_, i) => {
      const [before, after] = [texts[i]!, texts[i + 1]!];
      return (
        (before === '' ? i === 0 : before.endsWith('.')) &&
        (after === '' ? i === paths.length - 1 : after.startsWith('.'))
      );
    });
    const placeholders = paths.map((path) => [path, compileTextTemplate(`{{ ${path} }}`)] as const);
    const empty = (record: CallRecord) => placeholders.find(([, value]) => value(record) === '')?.[0];
    return { render, filter: texts.join('*'), wholeTokens, empty };
  });
