// A run's spans (tracing on): one `run <workflow>` span per drive of the run on a process, one
// `step <id>` span per step it runs there. The trace context travels in the journal: run_started's
// metadata keeps the `traceparent` of the run's first span, and a drive on any worker (after a crash,
// a person's decision, a long timer) opens its run span under it, so the run stays one trace.
import { context, trace, type Link, type Span } from '@opentelemetry/api';
import type { NewEvent } from '../../eventstore/types.js';
import { contextOfTraceparent, inSpan, svcTracer, traceparentOf, tracingEnabled, withSpan } from '../../tracing/tracer.js';
import type { StepDefinition } from '../../workflows/definition.js';
import type { RunEvent } from '../events.js';
import type { Drive } from './drive.js';
import { attemptOf } from './timed.js';

/** The event-metadata key of the trace context a run continues. */
export const TRACEPARENT_KEY = 'traceparent';

/**
 * Opens the drive's run span. A new run's parent is the span in effect (the request, or the step of
 * a parent run, that started it); a resumed run's is the trace context its run_started journaled,
 * linked to the span in effect (the request that resumed it), if any. `svc.run.resumed` says whether
 * the run went on from a journal with more than its run_started (a child run's first drive does not).
 */
export function openRunSpan(drive: Drive, resumed: boolean): void {
  if (!tracingEnabled()) return;
  const journaled = resumed ? contextOfTraceparent(drive.recorded[0]?.metadata[TRACEPARENT_KEY]) : undefined;
  const current = trace.getSpanContext(context.active());
  const links: Link[] = journaled && current ? [{ context: current }] : [];
  const { name, version } = drive.workflow;
  drive.span = svcTracer().startSpan(
    `run ${name}`,
    {
      links,
      attributes: { 'svc.run.id': drive.runId, 'svc.workflow': name, 'svc.workflow.version': version, 'svc.run.resumed': resumed && drive.recorded.length > 1 },
    },
    journaled ?? context.active(),
  );
}

/** The event with the trace context a run continues in its metadata: `span`'s, else the span in effect. */
export function withTraceContext<E extends NewEvent | RunEvent>(event: E, span?: Span): E {
  if (!tracingEnabled()) return event;
  const traceparent = traceparentOf(span ?? trace.getActiveSpan());
  return traceparent ? { ...event, metadata: { ...event.metadata, [TRACEPARENT_KEY]: traceparent } } : event;
}

/** Runs the drive in its run span (if one is open), ended with the run's journaled status. */
export function inRunSpan<T>(drive: Drive, work: () => Promise<T>): Promise<T> {
  const span = drive.span;
  if (!span) return work();
  return withSpan(span, work).finally(() => {
    const status = drive.committed.status;
    span.setAttribute('svc.run.status', status);
    if (status === 'failed') span.setStatus({ code: 2 /* SpanStatusCode.ERROR */ });
    span.end();
  });
}

/** Ends a run span whose drive never started (its first commit failed). */
export function endRunSpan(drive: Drive): void {
  drive.span?.end();
}

/**
 * Runs one visit of a step in its span: workflow, step id, kind and attempt, and, once the visit
 * journaled the step's end, its signal; a visit that ends in a wait (a person, a timer, a retry)
 * says what the run waits for.
 */
export function inStepSpan(drive: Drive, step: StepDefinition, work: () => Promise<void>): Promise<void> {
  if (!tracingEnabled() || !drive.span) return work();
  const finishedBefore = finishesOf(drive, step.id).length;
  const span = svcTracer().startSpan(`step ${step.id}`, {
    attributes: {
      'svc.run.id': drive.runId,
      'svc.workflow': drive.workflow.name,
      'svc.step.id': step.id,
      'svc.step.kind': step.kind,
      'svc.step.attempt': attemptOf(drive, step.id),
    },
  });
  return inSpan(span, async () => {
    await work();
    const finishes = finishesOf(drive, step.id);
    const finish = finishes.length > finishedBefore ? finishes[finishes.length - 1] : undefined;
    if (finish?.type === 'step_completed' || finish?.type === 'step_failed') {
      span.setAttribute('svc.step.signal', finish.data.payload.signal);
      if (finish.type === 'step_failed') span.setStatus({ code: 2 /* SpanStatusCode.ERROR */ });
    } else {
      span.setAttribute('svc.run.status', drive.state.status);
    }
  });
}

function finishesOf(drive: Drive, stepId: string): RunEvent[] {
  const isFinish = (event: RunEvent) => (event.type === 'step_completed' || event.type === 'step_failed') && event.data.agent_id === stepId;
  return [...drive.recorded.filter(isFinish), ...drive.pending.filter(isFinish)];
}
