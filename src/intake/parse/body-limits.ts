/**
 * How much of a body the parsers read before refusing it with 413: fields, bytes per field, multipart parts.
 * Kept apart from both readers of multipart bodies (parse-body.ts with busboy, multipart-plain.ts by hand), which
 * must refuse at the same limits; the whole body is bounded before any of them, as it is read (http/read-body.ts).
 */

export interface BodyLimits {
  fields: number;
  fieldSize: number;
  parts: number;
}

export const DEFAULT_BODY_LIMITS: Readonly<BodyLimits> = Object.freeze({ fields: 1000, fieldSize: 65536, parts: 1000 });
