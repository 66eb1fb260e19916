// A part of a frame drawn into its own canvas and copied onto the frame: drawn again only when what it
// depends on changes. The label column does not change while the view pans, and its text is among the
// dearest things a software canvas (headless chromium, no GPU) draws: a copy costs a fraction of it.

import { setupCanvas } from "./render";

export class Layer {
  private canvas: HTMLCanvasElement | null = null;
  private deps: readonly unknown[] = [];
  /** how many times the layer was drawn (not copied) */
  paints = 0;

  /** Copy the layer (`cssW` × `cssH` at the top left) onto `target`, drawing it first with `paint` when
   * `deps` differ (===, item by item) from the last drawing's. */
  draw(target: CanvasRenderingContext2D, deps: readonly unknown[], cssW: number, cssH: number, paint: (ctx: CanvasRenderingContext2D) => void): void {
    if (typeof document === "undefined") {
      paint(target);
      return;
    }
    this.canvas ??= document.createElement("canvas");
    const dpr = window.devicePixelRatio || 1;
    const all = [...deps, cssW, cssH, dpr];
    if (all.length !== this.deps.length || all.some((d, i) => d !== this.deps[i])) {
      const ctx = setupCanvas(this.canvas, cssW, cssH);
      if (!ctx) {
        paint(target);
        return;
      }
      ctx.clearRect(0, 0, cssW, cssH);
      paint(ctx);
      this.deps = all;
      this.paints++;
    }
    target.save();
    target.setTransform(1, 0, 0, 1, 0, 0);
    target.drawImage(this.canvas, 0, 0);
    target.restore();
  }

  /** Forget the drawing (the next draw paints). */
  reset(): void {
    this.deps = [];
  }
}
