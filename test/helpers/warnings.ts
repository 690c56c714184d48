import { onTestFinished, vi } from 'vitest';

export interface CaughtWarning {
  message: string;
  code: string | undefined;
}

/**
 * For a test that makes callhook warn on purpose (a writer thread made to fail, say): the process warnings with
 * this code are kept for the test to check instead of going to stderr, where a green run would show them as if
 * something had gone wrong. Any other warning is emitted as usual, and the spy goes when the test ends.
 */
export function catchWarnings(code: string): CaughtWarning[] {
  const caught: CaughtWarning[] = [];
  const emit = process.emitWarning.bind(process);
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error, ...rest: unknown[]) => {
    const options = rest[0];
    const warned =
      typeof options === 'object' && options !== null
        ? (options as { code?: string }).code
        : typeof rest[1] === 'string'
          ? rest[1]
          : undefined;
    if (warned === code)
      caught.push({ message: typeof warning === 'string' ? warning : warning.message, code: warned });
    else (emit as (...args: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning);
  onTestFinished(() => spy.mockRestore());
  return caught;
}
