/** Transfer instrumentation: a `taskline.transfer` span per transfer of the call. */
import type { FailedOutcome } from '../outcome.js';
import { ATTR, SPAN } from './names.js';
import { maskNumber, setAttributes, withSpan } from './tracing.js';

/** Runs one transfer inside a `taskline.transfer` span (number cut to its last four digits). */
export function traceTransfer(
  request: { to: string; mode: string },
  run: () => Promise<FailedOutcome>,
): Promise<FailedOutcome> {
  return withSpan(
    SPAN.transfer,
    () => ({ [ATTR.transferMode]: request.mode, [ATTR.transferTo]: maskNumber(request.to) }),
    async (span) => {
      const outcome = await run();
      setAttributes(span, () => ({
        [ATTR.status]: outcome.status,
        ...(outcome.reason
          ? { [ATTR.reason]: outcome.reason.split(request.to).join(maskNumber(request.to)) }
          : {}),
      }));
      return outcome;
    },
  );
}
