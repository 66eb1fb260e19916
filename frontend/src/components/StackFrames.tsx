// A call stack whose frames with a file and line are links: inside VS Code they post the jump-to-source
// message; elsewhere they show the path and copy `file:line`. Each such frame also has a copy button and,
// for an absolute path (after the path rules), a vscode://file link; library frames can be hidden.

import { type ReactNode, useState, useSyncExternalStore } from "react";
import {
  type Frame,
  copyText,
  embeddedTwoDeep,
  isLibraryFrame,
  jumpMessage,
  loadHideLibrary,
  loadPathRules,
  mapPath,
  parsePathRules,
  saveHideLibrary,
  savePathRules,
  vscodeUrl,
} from "../lib/source";

// Settings every stack on the page shares (the path rules, hiding library frames): a change re-renders
// them all. Kept in local storage; the in-memory copy is the truth when storage is disabled.
let hideLibrary: boolean | null = null;
let settingsVersion = 0;
const listeners = new Set<() => void>();

function settingsChanged(): void {
  settingsVersion++;
  listeners.forEach((l) => l());
}

function useSettings(): number {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => settingsVersion,
  );
}

function hidingLibrary(): boolean {
  if (hideLibrary === null) hideLibrary = loadHideLibrary();
  return hideLibrary;
}

function setHidingLibrary(hide: boolean): void {
  hideLibrary = hide;
  saveHideLibrary(hide);
  settingsChanged();
}

/** The recorded path with the path rules applied, and its `file:line`. */
function located(f: Frame, rulesText: string): { file: string; loc: string } {
  const file = mapPath(f.file ?? "", parsePathRules(rulesText));
  return { file, loc: `${file}:${f.line ?? ""}` };
}

export function openFrame(f: Frame, rulesText: string = loadPathRules()): Promise<string> {
  if (!f.file || f.line === null) return Promise.resolve("");
  const { file, loc } = located(f, rulesText);
  if (embeddedTwoDeep()) {
    // VS Code's webview checks the message's origin (TensorBoard's) and opens the file.
    window.parent.parent.postMessage(jumpMessage(file, f.line), "*");
    return Promise.resolve(`Opening ${loc} in VS Code`);
  }
  return copyFrame(f, rulesText);
}

function copyFrame(f: Frame, rulesText: string = loadPathRules()): Promise<string> {
  const { loc } = located(f, rulesText);
  return copyText(loc).then((ok) => (ok ? `Copied ${loc}` : loc));
}

/** Editor for the path prefix rules (kept in the browser's local storage). */
export function PathRules(): ReactNode {
  const [text, setText] = useState(loadPathRules);
  return (
    <details className="path-rules" data-testid="path-rules">
      <summary>Source path mapping{text.trim() ? ` (${parsePathRules(text).length})` : ""}</summary>
      <label>
        Replace recorded path prefixes by local ones, one <code>FROM=TO</code> per line (e.g.{" "}
        <code>/workspace/=/home/me/project/</code>):
        <textarea
          rows={2}
          value={text}
          spellCheck={false}
          onChange={(e) => {
            setText(e.target.value);
            savePathRules(e.target.value);
            settingsChanged();
          }}
        />
      </label>
    </details>
  );
}

/** The one switch that hides library frames in every stack of the page (remembered). */
export function LibraryToggle(): ReactNode {
  useSettings();
  return (
    <label className="stack-tools" title="Frames under torch/, site-packages/, dist-packages/, python3.x/ (the standard library), <frozen …> and built-ins">
      <input type="checkbox" checked={hidingLibrary()} onChange={(e) => setHidingLibrary(e.target.checked)} data-testid="hide-library" />
      Hide library frames
    </label>
  );
}

type Shown = { frame: Frame; index: number } | { hidden: number; index: number };

/** The frames to list: with library frames hidden, each run of them becomes one "n hidden" line (the
 * others keep their numbers in the whole stack). */
function shownFrames(frames: Frame[], hide: boolean): Shown[] {
  const out: Shown[] = [];
  frames.forEach((frame, index) => {
    if (!hide || !isLibraryFrame(frame)) out.push({ frame, index });
    else {
      const last = out[out.length - 1];
      if (last && "hidden" in last) last.hidden++;
      else out.push({ hidden: 1, index });
    }
  });
  return out;
}

/** A call stack, innermost frame first. toggle: show the hide-library switch above it (leave it out
 * where one switch above several stacks serves them all). */
export function StackFrames({ frames, toggle = true }: { frames: Frame[]; toggle?: boolean }): ReactNode {
  const [note, setNote] = useState<string>("");
  useSettings();
  if (frames.length === 0) return <div className="muted">No call stack recorded.</div>;
  const rules = loadPathRules();
  const lines = shownFrames(frames, hidingLibrary());
  return (
    <div className="stack" data-testid="stack">
      {toggle && <LibraryToggle />}
      <ol>
        {lines.map((s) => {
          if ("hidden" in s)
            return (
              <li key={s.index} className="frame-hidden" data-testid="library-hidden">
                … {s.hidden} library frame{s.hidden === 1 ? "" : "s"} hidden
              </li>
            );
          const f = s.frame;
          if (!f.file || f.line === null)
            return (
              <li key={s.index} value={s.index + 1} className="frame-plain">
                {f.text}
              </li>
            );
          const { file, loc } = located(f, rules);
          const vscode = vscodeUrl(file, f.line);
          return (
            <li key={s.index} value={s.index + 1}>
              <a
                href="#"
                className="frame-link"
                data-file={f.file}
                data-line={f.line}
                title={`${loc}: ${embeddedTwoDeep() ? "open in VS Code" : "copy"}`}
                onClick={(e) => {
                  e.preventDefault();
                  void openFrame(f).then(setNote);
                }}
              >
                {f.file}({f.line})
              </a>
              {f.func && <span className="frame-func">: {f.func}</span>}
              {/* an anchor, as the frame link: views' tests and layouts take a stack's buttons for their own */}
              <a
                href="#"
                role="button"
                className="frame-act frame-copy"
                title={`Copy ${loc}`}
                onClick={(e) => {
                  e.preventDefault();
                  void copyFrame(f).then(setNote);
                }}
              >
                copy
              </a>
              {vscode ? (
                <a className="frame-act frame-vscode" href={vscode} data-file={f.file} title={`Open ${loc} in VS Code (${vscode})`}>
                  VS Code
                </a>
              ) : null}
            </li>
          );
        })}
      </ol>
      {note && (
        <div className="stack-note" role="status" data-testid="stack-note">
          {note}
        </div>
      )}
    </div>
  );
}
