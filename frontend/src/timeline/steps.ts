// Step times in two senses: the ruler draws each step's host range (ProfilerStep#N); the Overview's
// step time extends it to the end of the device work launched in it (docs/metrics.md). Both are said
// wherever one is shown.

import { formatDuration } from "../lib/format";
import type { TlStep, TlTracks } from "./api";
import type { TimelineController } from "./controller";

/** The step whose host range holds time `t` (absolute µs), else null. */
export function stepAt(steps: TlStep[], t: number): TlStep | null {
  return steps.find((s) => s.start <= t && t <= s.end) ?? null;
}

/** "Step 5: 176.1 ms host range (ProfilerStep#5, drawn here) · 188 ms to the end of its device work (the
 * Overview's step time)"; the second part only when the step has a device extension. */
export function stepTitle(s: TlStep, duration: (us: number) => string): string {
  const host = `Step ${s.number}: ${duration(s.end - s.start)} host range (${s.name || `ProfilerStep#${s.number}`}, drawn here)`;
  if (s.deviceStart === null || s.deviceEnd === null) return host;
  return `${host} · ${duration(s.deviceEnd - s.deviceStart)} from its start to the end of its device work (the Overview's step time)`;
}

/** The ruler's hover text: both times of the step under the pointer. */
export function rulerTitle(canvas: HTMLCanvasElement, clientX: number, ctl: TimelineController | null, tracks: TlTracks): void {
  const t = ctl?.timeAtX(clientX - canvas.getBoundingClientRect().left) ?? null;
  const s = t === null ? null : stepAt(tracks.steps, t);
  const title = s ? stepTitle(s, formatDuration) : "";
  if (canvas.title !== title) canvas.title = title;
}
