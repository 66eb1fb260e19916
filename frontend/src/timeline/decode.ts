// The `format=bin` window answer (docs/api.md): "TLW2" · u32 header length H · H bytes of JSON header
// (8 + H a multiple of 8) · n values of each column. Every column is a typed array over the answer's
// own buffer: decoding costs the header's JSON.parse and nothing per event.

import { arr, get, num } from "../lib/pick";
import { type TlWindow, readCounters } from "./api";

export const MAGIC = "TLW2";

export class DecodeError extends Error {
  override name = "DecodeError";
}

export function decodeWindow(buf: ArrayBuffer): TlWindow {
  if (buf.byteLength < 8) throw new DecodeError("timeline answer too short");
  const head = new Uint8Array(buf, 0, 8);
  const magic = String.fromCharCode(head[0] ?? 0, head[1] ?? 0, head[2] ?? 0, head[3] ?? 0);
  if (magic !== MAGIC) throw new DecodeError(`not a timeline window (magic ${JSON.stringify(magic)})`);
  const h = new DataView(buf).getUint32(4, true);
  if (8 + h > buf.byteLength) throw new DecodeError("timeline header runs past the answer");
  const header: unknown = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, h)));
  const n = num(header, "count") ?? 0;
  let off = 8 + h;
  if (off % 8 !== 0) throw new DecodeError("timeline columns are not 8-byte aligned");
  const need = off + n * (8 + 4 + 4 + 4 + 4 + 4 + 2 + 2 + 1);
  if (need > buf.byteLength) throw new DecodeError(`timeline answer holds ${buf.byteLength} bytes, ${need} expected`);
  const take = <T>(make: (b: ArrayBuffer, o: number, len: number) => T, size: number): T => {
    const a = make(buf, off, n);
    off += n * size;
    return a;
  };
  return {
    start: num(header, "start_us") ?? 0,
    end: num(header, "end_us") ?? 0,
    px: num(header, "px") ?? 0,
    resolution: num(header, "resolution_us") ?? 0,
    coarsened: get(header, "coarsened") === true,
    count: n,
    names: arr(header, "names").map(String),
    kinds: arr(header, "kinds").map(String),
    counters: readCounters(header),
    startUs: take((b, o, l) => new Float64Array(b, o, l), 8),
    durUs: take((b, o, l) => new Float32Array(b, o, l), 4),
    row: take((b, o, l) => new Int32Array(b, o, l), 4),
    name: take((b, o, l) => new Uint32Array(b, o, l), 4),
    cnt: take((b, o, l) => new Uint32Array(b, o, l), 4),
    major: take((b, o, l) => new Uint32Array(b, o, l), 4),
    track: take((b, o, l) => new Uint16Array(b, o, l), 2),
    depth: take((b, o, l) => new Uint16Array(b, o, l), 2),
    kind: take((b, o, l) => new Uint8Array(b, o, l), 1),
  };
}

export interface EncodeItem {
  start: number;
  dur: number;
  row: number;
  name: number;
  count: number;
  /** the name covering most of a box's time; `name` when left out */
  major?: number;
  track: number;
  depth: number;
  kind: number;
}

/** The inverse of decodeWindow, for tests (and a reference of the layout). */
export function encodeWindow(header: Record<string, unknown>, items: EncodeItem[]): ArrayBuffer {
  let json = JSON.stringify({ ...header, count: items.length });
  let bytes = new TextEncoder().encode(json);
  while ((8 + bytes.length) % 8 !== 0) {
    json += " ";
    bytes = new TextEncoder().encode(json);
  }
  const n = items.length;
  const size = 8 + bytes.length + n * 33;
  const buf = new ArrayBuffer(size);
  const u8 = new Uint8Array(buf);
  u8.set([84, 76, 87, 50]); // "TLW2"
  new DataView(buf).setUint32(4, bytes.length, true);
  u8.set(bytes, 8);
  let off = 8 + bytes.length;
  const put = <A extends { [i: number]: number }>(make: (b: ArrayBuffer, o: number, l: number) => A, size1: number, f: (it: EncodeItem) => number) => {
    const a = make(buf, off, n);
    items.forEach((it, i) => {
      a[i] = f(it);
    });
    off += n * size1;
  };
  put((b, o, l) => new Float64Array(b, o, l), 8, (it) => it.start);
  put((b, o, l) => new Float32Array(b, o, l), 4, (it) => it.dur);
  put((b, o, l) => new Int32Array(b, o, l), 4, (it) => it.row);
  put((b, o, l) => new Uint32Array(b, o, l), 4, (it) => it.name);
  put((b, o, l) => new Uint32Array(b, o, l), 4, (it) => it.count);
  put((b, o, l) => new Uint32Array(b, o, l), 4, (it) => it.major ?? it.name);
  put((b, o, l) => new Uint16Array(b, o, l), 2, (it) => it.track);
  put((b, o, l) => new Uint16Array(b, o, l), 2, (it) => it.depth);
  put((b, o, l) => new Uint8Array(b, o, l), 1, (it) => it.kind);
  return buf;
}

/** A window with no events (a tile outside the profile: nothing to ask the server for). */
export function emptyWindow(start: number, end: number, px: number): TlWindow {
  return {
    start,
    end,
    px,
    resolution: (end - start) / px,
    coarsened: false,
    count: 0,
    names: [],
    kinds: [],
    counters: new Map(),
    startUs: new Float64Array(0),
    durUs: new Float32Array(0),
    row: new Int32Array(0),
    name: new Uint32Array(0),
    cnt: new Uint32Array(0),
    major: new Uint32Array(0),
    track: new Uint16Array(0),
    depth: new Uint16Array(0),
    kind: new Uint8Array(0),
  };
}
