/**
 * A span processor that masks personal data in every span before any exporter sees it —
 * upstream's spans included (their `lk.pii.*` attributes carry transcripts and tool
 * arguments): card numbers and secrets registered while a call runs (a PIN collected with
 * `mask: true`) become "*", exactly as in taskline's logs. Register it on your provider.
 */
import type { Attributes } from '@opentelemetry/api';
import { maskAttributes } from './tracing.js';

/** The parts of an SDK span the processor rewrites (structural: no SDK import at run time). */
interface EndingSpan {
  readonly attributes: Attributes;
  readonly events: ReadonlyArray<{ attributes?: Attributes }>;
  readonly status: { code: number; message?: string };
  setStatus(status: { code: number; message?: string }): unknown;
}

/**
 * Masks span attributes, event attributes and the status message in `onEnding`, which the
 * OpenTelemetry SDK (2.x) calls on every processor before any `onEnd`, so the order in which
 * processors were registered does not matter.
 */
export class MaskingSpanProcessor {
  onStart(): void {}

  onEnding(span: EndingSpan): void {
    maskInPlace(span.attributes);
    for (const event of span.events) if (event.attributes) maskInPlace(event.attributes);
    const message = span.status.message;
    if (message) {
      const masked = maskAttributes({ message }).message as string;
      if (masked !== message) span.setStatus({ code: span.status.code, message: masked });
    }
  }

  onEnd(): void {}

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}

function maskInPlace(attrs: Attributes): void {
  const masked = maskAttributes(attrs);
  const target = attrs as Record<string, unknown>;
  for (const [key, value] of Object.entries(masked)) {
    if (target[key] !== value) target[key] = value;
  }
}
