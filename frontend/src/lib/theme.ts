// Light/dark: follow TensorBoard's dark mode (class "dark-mode" on its <body>, readable because the
// plugin frame is same-origin) when we are inside it, else the browser's prefers-color-scheme.

import { useEffect, useState } from "react";

export type Theme = "light" | "dark";

/** The nearest same-origin ancestor body that carries TensorBoard's theme class, if any. */
function tensorBoardBody(): HTMLElement | null {
  let w: Window = window;
  for (let i = 0; i < 4 && w.parent !== w; i++) {
    try {
      w = w.parent;
      const body = w.document.body;
      if (body && (w.document.querySelector("tb-webapp, tf-tensorboard") || body.classList.contains("dark-mode")))
        return body;
    } catch {
      return null; // cross-origin ancestor (e.g. VS Code's webview)
    }
  }
  return null;
}

function mediaDark(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

export function currentTheme(): Theme {
  const tb = tensorBoardBody();
  if (tb) return tb.classList.contains("dark-mode") ? "dark" : "light";
  return mediaDark() ? "dark" : "light";
}

let listeners: ((t: Theme) => void)[] = [];
let theme: Theme | null = null;

function watch(): void {
  const update = () => {
    const t = currentTheme();
    if (t !== theme) {
      theme = t;
      document.documentElement.dataset.theme = t;
      for (const l of listeners) l(t);
    }
  };
  theme = currentTheme();
  document.documentElement.dataset.theme = theme;
  const tb = tensorBoardBody();
  if (tb) new MutationObserver(update).observe(tb, { attributes: true, attributeFilter: ["class"] });
  window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", update);
}

export function useTheme(): Theme {
  if (theme === null) watch();
  const [t, setT] = useState<Theme>(theme ?? "light");
  useEffect(() => {
    const l = (x: Theme) => setT(x);
    listeners.push(l);
    return () => {
      listeners = listeners.filter((y) => y !== l);
    };
  }, []);
  return t;
}

export function initTheme(): void {
  if (theme === null) watch();
}
