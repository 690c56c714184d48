export {
  PARAMETER_FORMATS,
  PARAMETER_TYPES,
  RECOMMENDED_PARAMETERS,
  SENTIMENTS,
  formatOf,
  impliedFormat,
  parameterSchema,
  parametersSchema,
  type FormatRule,
  type Parameter,
  type ParameterFormat,
  type ParameterType,
} from './parameters.js';
export { isMissing, toBoolean, toNumber, toText } from './coerce.js';
export { isEmail, isHttpUrl, toCalendarDate, toE164, toEnum } from './formats.js';
export {
  compileParameters,
  normalize,
  type CompiledHook,
  type NormalizeOptions,
  type Normalized,
} from './normalize.js';
export { canonicalJson, contentHash, dedupKey, type DedupEntry } from './dedup-key.js';
