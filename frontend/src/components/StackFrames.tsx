// A call stack whose frames with a file and line are links: inside VS Code they post the jump-to-source
// message; elsewhere they show the path and copy `file:line`.

import { type ReactNode, useState } from "react";
import {
  type Frame,
  copyText,
  embeddedTwoDeep,
  jumpMessage,
  loadPathRules,
  mapPath,
  parsePathRules,
  savePathRules,
} from "../lib/source";

export function openFrame(f: Frame, rulesText: string = loadPathRules()): Promise<string> {
  if (!f.file || f.line === null) return Promise.resolve("");
  const file = mapPath(f.file, parsePathRules(rulesText));
  const loc = `${file}:${f.line}`;
  if (embeddedTwoDeep()) {
    // VS Code's webview checks the message's origin (TensorBoard's) and opens the file.
    window.parent.parent.postMessage(jumpMessage(file, f.line), "*");
    return Promise.resolve(`Opening ${loc} in VS Code`);
  }
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
          }}
        />
      </label>
    </details>
  );
}

export function StackFrames({ frames }: { frames: Frame[] }): ReactNode {
  const [note, setNote] = useState<string>("");
  if (frames.length === 0) return <div className="muted">No call stack recorded.</div>;
  return (
    <div className="stack" data-testid="stack">
      <ol>
        {frames.map((f, i) =>
          f.file && f.line !== null ? (
            <li key={i}>
              <a
                href="#"
                className="frame-link"
                data-file={f.file}
                data-line={f.line}
                title={`${f.file}:${f.line}`}
                onClick={(e) => {
                  e.preventDefault();
                  void openFrame(f).then(setNote);
                }}
              >
                {f.file}({f.line})
              </a>
              {f.func && <span className="frame-func">: {f.func}</span>}
            </li>
          ) : (
            <li key={i} className="frame-plain">
              {f.text}
            </li>
          ),
        )}
      </ol>
      {note && (
        <div className="stack-note" role="status" data-testid="stack-note">
          {note}
        </div>
      )}
    </div>
  );
}
