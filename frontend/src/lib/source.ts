// Call-stack frames and jump to source (VS Code's TensorBoard webview, see docs/user_guide.md).
import { arr, num, str } from "./pick";

export interface Frame {
  text: string;
  file: string | null;
  line: number | null;
  func: string;
}

/** Parse `path/to/file.py(123): fn` (both the legacy `Call stack` frames and python_function names). */
export function parseFrame(text: string): Frame {
  const t = text.trim();
  const m = /^(.*)\((\d+)\)(?::\s*(.*))?$/s.exec(t);
  if (m && m[1] && m[1].trim() !== "") {
    return { text: t, file: m[1].trim(), line: Number(m[2]), func: (m[3] ?? "").trim() };
  }
  return { text: t, file: null, line: null, func: t };
}

/** A legacy `Call stack` string: frames separated by `;`. */
export function parseStack(stack: string): Frame[] {
  return stack
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(parseFrame);
}

/** Call-stack frames as the routes send them: a list of {file, line, function} or of strings, or one
 * string of lines. */
export function readFrames(v: unknown): Frame[] {
  if (typeof v === "string") return parseStack(v);
  return arr(v).map((f) => {
    if (typeof f === "string") return parseFrame(f);
    const file = str(f, "file") || null;
    const line = num(f, "line");
    const func = str(f, "function");
    return { text: file ? `${file}(${line ?? "?"}): ${func}` : func, file, line, func };
  });
}

/**
 * True when this page is two frames below another document, as in VS Code: plugin frame → TensorBoard
 * page → webview page. In a plain browser tab TensorBoard's page is the top, so parent.parent === parent.
 */
export function embeddedTwoDeep(w: Window = window): boolean {
  try {
    return w.parent !== w && w.parent.parent !== w.parent;
  } catch {
    return false;
  }
}

/**
 * The message VS Code's webview relays as `jump_to_source`: a 0-based line. The webview drops messages
 * whose line is falsy, so a frame on line 1 is sent as 1 (the editor lands one line low) instead of 0.
 */
export function jumpMessage(file: string, line: number): { filename: string; line: number } {
  return { filename: file, line: line > 1 ? line - 1 : 1 };
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API refused (permissions policy in iframes): fall back to a selected textarea.
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}

// ---- library frames and editor links ---------------------------------------------------------------

/** Frames of PyTorch itself, installed packages, the standard library and built-ins: what a user
 * usually skips to find their own code. Paths may be absolute or relative (`torch/nn/modules/…`). */
const LIBRARY_PATH = /(^|[\\/])(torch|site-packages|dist-packages)[\\/]|(^|[\\/])python\d+(\.\d+)?[\\/]|^<frozen[ >]/;

export function isLibraryFrame(f: Frame): boolean {
  if (f.file) return LIBRARY_PATH.test(f.file);
  return /^<(built-in|frozen)[ >]/.test(f.func || f.text);
}

/** A `vscode://file/<absolute path>:<line>` link (VS Code's URL handler), or null for a relative path
 * (a path mapping rule can make it absolute). */
export function vscodeUrl(file: string, line: number): string | null {
  const unix = file.startsWith("/");
  if (!unix && !/^[A-Za-z]:[\\/]/.test(file)) return null;
  const path = file.replace(/\\/g, "/").replace(/^\/+/, "");
  return `vscode://file/${encodeURI(path).replace(/#/g, "%23").replace(/\?/g, "%3F")}:${line}`;
}

const HIDE_KEY = "torch-tb-profiler.hide-library-frames";

export function loadHideLibrary(): boolean {
  try {
    return window.localStorage.getItem(HIDE_KEY) === "1";
  } catch {
    return false;
  }
}

export function saveHideLibrary(hide: boolean): void {
  try {
    window.localStorage.setItem(HIDE_KEY, hide ? "1" : "0");
  } catch {
    // storage disabled: the choice lasts for this page only
  }
}

// ---- path prefix mapping ------------------------------------------------------------------------
// Traces recorded in a container or on a cluster name files by paths that do not exist here. Rules
// "FROM=TO" (separated by ";" or new lines) replace a recorded prefix by a local one; the longest
// matching FROM wins.

export interface PathRule {
  from: string;
  to: string;
}

export function parsePathRules(text: string): PathRule[] {
  return text
    .split(/[;\n]/)
    .map((r) => r.trim())
    .filter((r) => r.includes("="))
    .map((r) => {
      const i = r.indexOf("=");
      return { from: r.slice(0, i).trim(), to: r.slice(i + 1).trim() };
    })
    .filter((r) => r.from !== "");
}

export function mapPath(file: string, rules: PathRule[]): string {
  let best: PathRule | null = null;
  for (const r of rules) if (file.startsWith(r.from) && (!best || r.from.length > best.from.length)) best = r;
  return best ? best.to + file.slice(best.from.length) : file;
}

const RULES_KEY = "torch-tb-profiler.path-rules";

export function loadPathRules(): string {
  try {
    return window.localStorage.getItem(RULES_KEY) ?? "";
  } catch {
    return "";
  }
}

export function savePathRules(text: string): void {
  try {
    window.localStorage.setItem(RULES_KEY, text);
  } catch {
    // storage disabled: the rules last for this page only
  }
}
