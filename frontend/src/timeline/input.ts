// What the input handlers (pointer.ts, keys.ts) see of the timeline controller, and the types they
// share with it. The handlers change the controller's state only through this interface.

import type { TlPlace, TlTracks, TlWindow } from "./api";
import type { Layout } from "./layout";
import type { Range } from "./nav";

/** the label column's default width (css px) */
export const LABEL_W = 210;

export interface Elements {
  root: HTMLElement;
  main: HTMLCanvasElement;
  ruler: HTMLCanvasElement;
  minimap: HTMLCanvasElement;
  tooltip: HTMLElement;
  /** the key help overlay (? toggles it) */
  help?: HTMLElement | null;
}

export interface Hit {
  index: number;
  id: string | null;
  name: string;
  start: number;
  dur: number;
  count: number;
  track: number;
  depth: number;
}

/** What the drawn answer is: its resolution (µs per box at least) and whether the server coarsened it. */
export interface Detail {
  resolution: number;
  coarsened: boolean;
}

export interface Callbacks {
  onView(v: Range): void;
  /** a click on an event (id) or on nothing (null) */
  onSelect(id: string | null, place: TlPlace | null): void;
  onRange(r: Range | null): void;
  /** the mark (M) was set or removed */
  onMark?(r: Range | null): void;
  onState(state: "loading" | "ready", error: Error | null, detail: Detail | null): void;
}

export interface InputHost {
  readonly el: Elements;
  readonly cb: Callbacks;
  readonly tracks: TlTracks;
  readonly base: number;
  readonly total: number;
  readonly layout: Layout;
  readonly areaW: number;
  /** the label column's width (css px) */
  readonly labelW: number;
  setLabelW(w: number): void;
  readonly mainH: number;
  readonly range: Range | null;
  readonly drawn: TlWindow | null;
  view: Range;
  scrollY: number;
  rangeMode: boolean;
  /** the pointer's x over the tracks canvas (css px), null when it is elsewhere */
  mouseX: number | null;
  setView(v: Range, notify?: boolean): void;
  setScroll(y: number): void;
  setRange(r: Range | null): void;
  toggleKey(key: string): void;
  hitTest(x: number, y: number): Hit | null;
  redraw(): void;
}

export type Listen = <K extends keyof HTMLElementEventMap>(
  t: HTMLElement | Window,
  type: K,
  f: (e: HTMLElementEventMap[K]) => void,
  opts?: AddEventListenerOptions,
) => void;

/** An `addEventListener` whose removal is pushed onto `cleanup`. */
export function listener(cleanup: (() => void)[]): Listen {
  return (t, type, f, opts) => {
    t.addEventListener(type, f as EventListener, opts);
    cleanup.push(() => t.removeEventListener(type, f as EventListener, opts));
  };
}
