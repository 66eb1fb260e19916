// A virtualized table: only the visible rows are in the DOM, so 100 000 rows scroll and sort without
// freezing. Sorting and search run on the raw values; cells show them formatted with units and carry
// the raw value in data-value (the end-to-end tests compare it with the API's).

import {
  type ColumnDef,
  type Row,
  type SortingState,
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getSortedRowModel,
  useReactTable,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useDeferredValue, useEffect, useMemo, useRef, useState } from "react";
import { csvHeader, downloadText, toCsv } from "../lib/csv";
import { headerTitle } from "../lib/columnHelp";
import { type ValueKind, formatValue } from "../lib/format";
import { tableMaxHeight, useWindowHeight } from "./fillHeight";

export interface Column<R> {
  id: string;
  header: string;
  kind: ValueKind;
  value: (r: R) => unknown;
  /** Custom cell content (defaults to the formatted value). Must render text, never HTML. */
  render?: (r: R) => ReactNode;
  /** What the column means, shown on hovering its header (lib/columnHelp.ts holds the definitions). */
  tooltip?: string;
  /** Grid track size, e.g. "minmax(240px, 4fr)". */
  width?: string;
  searchable?: boolean;
}

export interface DataTableProps<R> {
  rows: R[];
  columns: Column<R>[];
  csvName: string;
  initialSort?: { id: string; desc: boolean };
  search?: boolean;
  searchPlaceholder?: string;
  /** Content shown under an expanded row; rows for which canExpand is false have no toggle. */
  expand?: { canExpand: (r: R) => boolean; render: (r: R) => ReactNode };
  /** A cap below the window's height, for small side tables; without it a table is as tall as its rows
   * or, when they do not fit, as the window (less the top bar and its toolbar). */
  height?: number;
  testId?: string;
  toolbar?: ReactNode;
  /** The selected row (highlighted, scrolled into view) and what a click on a row does. */
  selected?: (r: R) => boolean;
  onRowClick?: (r: R) => void;
  /** The rows are one page of a larger answer searched and sorted by the server: the search box and
   * the header clicks go to these callbacks instead of filtering and sorting the page here. */
  server?: {
    query: string;
    onQuery: (q: string) => void;
    sort: { id: string; desc: boolean };
    onSort: (sort: { id: string; desc: boolean }) => void;
    /** What the count says, e.g. "1–10,000 of 500,000 rows". */
    count: string;
    /** Paging buttons and the like. */
    pager?: ReactNode;
  };
}

export type ServerTable = NonNullable<DataTableProps<unknown>["server"]>;

/** The search of a paged table: the box's text, the query sent (300 ms after the last keystroke) and
 * the page offset, back to the first page when the query or anything in `resetOn` changes. */
export function useServerQuery(resetOn: unknown[]): {
  typed: string;
  setTyped: (q: string) => void;
  query: string;
  offset: number;
  setOffset: (offset: number) => void;
} {
  const [typed, setTyped] = useState("");
  const [query, setQuery] = useState("");
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    const t = window.setTimeout(() => setQuery(typed), 300);
    return () => window.clearTimeout(t);
  }, [typed]);
  useEffect(() => setOffset(0), [query, ...resetOn]);
  return { typed, setTyped, query, offset, setOffset };
}

/** The `server` prop of a table showing one page of a paged route (operators, kernels): the count
 * "first–last of N rows (M in all)" and Previous/Next buttons that move `offset` by `pageSize`. */
export function serverPage(o: {
  query: string;
  onQuery: (q: string) => void;
  sort: { id: string; desc: boolean };
  /** only sorts the route knows reach it (the others are ignored) */
  sortable: (id: string) => boolean;
  onSort: (sort: { id: string; desc: boolean }) => void;
  page: { offset: number; matched: number; total: number };
  shown: number;
  pageSize: number;
  setOffset: (offset: number) => void;
}): ServerTable {
  const { page } = o;
  const first = page.matched ? page.offset + 1 : 0;
  const last = page.offset + o.shown;
  return {
    query: o.query,
    onQuery: o.onQuery,
    sort: o.sort,
    onSort: (s) => (o.sortable(s.id) ? o.onSort(s) : undefined),
    count: `${first.toLocaleString("en-US")}–${last.toLocaleString("en-US")} of ${rowCount(page.matched)}${
      page.matched < page.total ? ` (${page.total.toLocaleString("en-US")} in all)` : ""
    }`,
    pager: (
      <span className="pager">
        <button type="button" className="btn" disabled={page.offset === 0} onClick={() => o.setOffset(Math.max(0, page.offset - o.pageSize))}>
          Previous
        </button>
        <button type="button" className="btn" disabled={last >= page.matched} onClick={() => o.setOffset(page.offset + o.pageSize)}>
          Next
        </button>
      </span>
    ),
  };
}

/** Tables of at most this many rows ignore the `height` cap: they fit every row (headers may wrap). */
const FIT_ROWS = 15;

export function rowCount(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "row" : "rows"}`;
}

const ROW_HEIGHT = 28;

/** Wide enough for the header's longest word (headers wrap between words, never inside one). */
function defaultWidth(kind: ValueKind, header: string): string {
  const word = Math.max(...header.split(/\s+/).map((w) => w.length));
  const px = Math.max(kind === "text" ? 200 : 84, Math.ceil(word * 8 + 24));
  return kind === "text" ? `minmax(${px}px, 4fr)` : `minmax(${px}px, 1fr)`;
}

export function DataTable<R>(props: DataTableProps<R>): ReactNode {
  const { rows, columns, csvName, expand, server } = props;
  const [localSorting, setSorting] = useState<SortingState>(props.initialSort ? [props.initialSort] : []);
  const [localQuery, setQuery] = useState("");
  const sorting: SortingState = server ? [server.sort] : localSorting;
  const query = server ? server.query : localQuery;
  const deferredQuery = useDeferredValue(server ? "" : localQuery);
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set());
  const scrollRef = useRef<HTMLDivElement>(null);
  const toolbarRef = useRef<HTMLDivElement>(null);
  const windowPx = useWindowHeight();

  const searchCols = useMemo(() => {
    const s = columns.filter((c) => c.searchable ?? c.kind === "text");
    return s.length ? s : columns.filter((c) => c.kind === "text");
  }, [columns]);

  const defs = useMemo<ColumnDef<R>[]>(
    () =>
      columns.map((c) => ({
        id: c.id,
        header: c.header,
        accessorFn: (r: R) => c.value(r),
        sortingFn: c.kind === "text" ? "text" : "basic",
        sortUndefined: "last",
        sortDescFirst: c.kind !== "text",
      })),
    [columns],
  );

  const table = useReactTable<R>({
    data: rows,
    columns: defs,
    state: { sorting, globalFilter: deferredQuery },
    onSortingChange: (u) => {
      const next = typeof u === "function" ? u(sorting) : u;
      if (!server) setSorting(next);
      else if (next[0]) server.onSort({ id: next[0].id, desc: next[0].desc });
    },
    manualSorting: !!server,
    globalFilterFn: (row: Row<R>, _columnId: string, filter: string) => {
      const needle = filter.toLowerCase();
      return searchCols.some((c) => String(c.value(row.original) ?? "").toLowerCase().includes(needle));
    },
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
  });
  const visible = table.getRowModel().rows;

  // Row ids are indexes into rows: new rows (another grouping, another range) close every detail.
  useEffect(() => setExpanded(new Set()), [rows]);

  // A new search or order starts at the top (not somewhere in the middle of the old list).
  useEffect(() => {
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [deferredQuery, sorting]);

  const virtualizer = useVirtualizer({
    count: visible.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (i) => visible[i]?.id ?? i,
  });

  // scroll the selected row into view when the selection changes
  const selected = props.selected;
  const selectedIndex = selected ? visible.findIndex((r) => selected(r.original)) : -1;
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: "center" });
  }, [selectedIndex, virtualizer]);

  const tracks = columns.map((c) => c.width ?? defaultWidth(c.kind, c.header));
  const template = (expand ? "28px " : "") + tracks.join(" ");
  // Narrow windows scroll sideways instead of squeezing columns below their minimum.
  const minWidth = (expand ? 28 : 0) + tracks.reduce((s, t) => s + Number(/(\d+)px/.exec(t)?.[1] ?? 100), 0);

  const exportCsv = () => {
    const header = columns.map((c) => csvHeader(c.header, c.kind));
    const data = visible.map((r) => columns.map((c) => c.value(r.original)));
    downloadText(`${csvName}.csv`, toCsv(header, data));
  };

  const toggle = (id: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <div className="dt" data-testid={props.testId}>
      <div className="dt-toolbar" ref={toolbarRef}>
        {props.search !== false && (
          <input
            type="search"
            className="dt-search"
            placeholder={props.searchPlaceholder ?? `Search ${searchCols.map((c) => c.header.toLowerCase()).join(", ")}`}
            value={query}
            onChange={(e) => (server ? server.onQuery(e.target.value) : setQuery(e.target.value))}
            aria-label="Search table"
          />
        )}
        {props.toolbar}
        <span className="dt-count" data-testid="row-count">
          {server
            ? server.count
            : visible.length === rows.length
              ? rowCount(rows.length)
              : `${visible.length.toLocaleString("en-US")} of ${rowCount(rows.length)}`}
        </span>
        {server?.pager}
        <button type="button" className="btn" onClick={exportCsv} title="Download the rows shown, as CSV">
          Export CSV
        </button>
      </div>
      <div
        className="dt-scroll"
        ref={scrollRef}
        style={{ maxHeight: Math.min(tableMaxHeight(windowPx, toolbarRef.current), rows.length > FIT_ROWS && props.height ? props.height : Infinity) }}
        role="table"
      >
        <div className="dt-head" role="row" style={{ gridTemplateColumns: template, minWidth }}>
          {expand && <div role="columnheader" aria-label="expand" />}
          {table.getHeaderGroups()[0]?.headers.map((h) => {
            const col = columns.find((c) => c.id === h.column.id);
            const dir = h.column.getIsSorted();
            return (
              <div
                key={h.id}
                role="columnheader"
                className={`dt-th${col && col.kind !== "text" ? " num" : ""}${col?.tooltip ? " dt-help" : ""}`}
                aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none"}
                title={headerTitle(col?.tooltip)}
                data-col={h.column.id}
                tabIndex={0}
                onClick={h.column.getToggleSortingHandler()}
                onKeyDown={(e) => {
                  if (e.key === "Enter" || e.key === " ") {
                    e.preventDefault();
                    h.column.toggleSorting(undefined, false);
                  }
                }}
              >
                {flexRender(h.column.columnDef.header, h.getContext())}
                <span className="dt-sort">{dir === "asc" ? " ▲" : dir === "desc" ? " ▼" : ""}</span>
              </div>
            );
          })}
        </div>
        <div className="dt-body" style={{ height: virtualizer.getTotalSize(), minWidth }}>
          {virtualizer.getVirtualItems().map((vi) => {
            const row = visible[vi.index];
            if (!row) return null;
            const r = row.original;
            const open = expanded.has(row.id);
            const can = expand?.canExpand(r) ?? false;
            return (
              <div
                key={vi.key}
                data-index={vi.index}
                ref={virtualizer.measureElement}
                className="dt-item"
                style={{ transform: `translateY(${vi.start}px)` }}
              >
                <div
                  role="row"
                  className={selected?.(r) ? "dt-row dt-selected" : "dt-row"}
                  aria-selected={selected ? selected(r) : undefined}
                  style={{ gridTemplateColumns: template }}
                  onClick={props.onRowClick ? () => props.onRowClick?.(r) : undefined}
                >
                  {expand && (
                    <div role="cell" className="dt-td dt-expand">
                      {can && (
                        <button
                          type="button"
                          className="dt-toggle"
                          aria-expanded={open}
                          aria-label={open ? "Hide details" : "Show details"}
                          onClick={() => toggle(row.id)}
                        >
                          {open ? "▾" : "▸"}
                        </button>
                      )}
                    </div>
                  )}
                  {columns.map((c) => {
                    const v = c.value(r);
                    const text = formatValue(c.kind, v);
                    return (
                      <div
                        key={c.id}
                        role="cell"
                        className={`dt-td ${c.kind !== "text" ? "num" : ""}`}
                        data-col={c.id}
                        data-value={typeof v === "number" ? String(v) : undefined}
                        title={c.kind === "text" ? text : undefined}
                      >
                        {c.render ? c.render(r) : text}
                      </div>
                    );
                  })}
                </div>
                {open && expand && <div className="dt-sub">{expand.render(r)}</div>}
              </div>
            );
          })}
        </div>
        {visible.length === 0 && (
          <div className="dt-empty">{rows.length === 0 ? "No rows." : "No row matches the search."}</div>
        )}
      </div>
    </div>
  );
}
