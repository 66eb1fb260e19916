import type { ReactNode } from "react";
import { ApiError } from "../api/client";

export function Empty({ title, children }: { title: string; children?: ReactNode }): ReactNode {
  return (
    <div className="empty" role="status" data-testid="empty">
      <strong>{title}</strong>
      {children && <div className="empty-why">{children}</div>}
    </div>
  );
}

export function ErrorBox({ error, what }: { error: Error; what?: string }): ReactNode {
  const status = error instanceof ApiError ? ` (HTTP ${error.status})` : "";
  return (
    <div className="error" role="alert" data-testid="error">
      <strong>{what ? `Could not load ${what}${status}` : `Error${status}`}</strong>
      <div>{error.message}</div>
    </div>
  );
}

export function Loading({ what }: { what: string }): ReactNode {
  return (
    <div className="loading" role="status" aria-live="polite">
      Loading {what}…
    </div>
  );
}

export function Section({ title, children, actions, id }: { title: string; children: ReactNode; actions?: ReactNode; id?: string }): ReactNode {
  return (
    <section className="section" data-testid={id}>
      <header className="section-head">
        <h2>{title}</h2>
        {actions && <div className="section-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Select({
  label,
  value,
  options,
  onChange,
  testId,
}: {
  label: string;
  value: string;
  options: { value: string; label?: string }[];
  onChange: (v: string) => void;
  testId?: string;
}): ReactNode {
  return (
    <label className="select">
      <span>{label}</span>
      <select value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId} aria-label={label}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label ?? o.value}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Stat({ label, value, title, testId, raw }: { label: string; value: string; title?: string; testId?: string; raw?: number | null }): ReactNode {
  return (
    <div className="stat" title={title} data-testid={testId} data-value={raw ?? undefined}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}

/** A table cell's name with a "Show in timeline" action (the Trace view zooms onto its longest event).
 * The button's label is CSS content, so the cell's text stays the name alone. */
export function TimelineLink({ name, onShow, title }: { name: string; onShow: (name: string) => void; title?: string }): ReactNode {
  return (
    <span className="tl-cell">
      <span className="tl-cell-name">{name}</span>
      <button
        type="button"
        className="tl-show"
        data-testid="show-in-timeline"
        title={title ?? "Show the longest of these in the timeline (Trace view)"}
        aria-label={`Show ${name} in the timeline`}
        onClick={(e) => {
          e.stopPropagation();
          onShow(name);
        }}
      />
    </span>
  );
}
