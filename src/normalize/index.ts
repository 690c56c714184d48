export { isMissing, toBoolean, toNumber, toText } from './coerce.js';
export { canonicalJson, contentHash, type DedupEntry, dedupKey } from './dedup-key.js';
export { DEFAULT_PHONE_REGION, isEmail, isHttpUrl, toCalendarDate, toE164, toEnum } from './formats.js';
export {
  type CompiledHook,
  compileParameters,
  type Normalized,
  type NormalizeOptions,
  normalize,
} from './normalize.js';
export {
  type FormatRule,
  formatOf,
  impliedFormat,
  PARAMETER_FORMATS,
  PARAMETER_TYPES,
  type Parameter,
  type ParameterFormat,
  type ParameterType,
  parameterSchema,
  parametersSchema,
  RECOMMENDED_PARAMETERS,
  SENTIMENTS,
} from './parameters.js';
