// The bytes a host hands over, decoded into the recording as every pane reads it: gunzip,
// parse, and each compile's steps made into step objects where they came as columns. Pure
// functions (no DOM), so node imports this file and tests it directly.
import { STEP_FIELDS } from "./stepfields.js";

/** The bytes of a DataView, ArrayBuffer or typed array, as a Uint8Array. */
export function bytesOf(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError("expected bytes (a DataView, ArrayBuffer or Uint8Array)");
}

/** gunzip, then UTF-8 decode. The chunks go straight into one buffer of the size gzip's
 * last four bytes give (what it holds, mod 2^32), decoded once: on a 55 MB recording about
 * half the time of `new Response(stream).text()`, which joins and decodes as it goes. */
export async function gunzipText(data) {
  const bytes = bytesOf(data);
  const inflate = new DecompressionStream("gzip");
  const writer = inflate.writable.getWriter();
  writer.write(bytes).catch(() => {});   // a bad stream is reported by the reader below
  writer.close().catch(() => {});
  const tail = bytes.length >= 4 ? new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true) : 0;
  let out = new Uint8Array(tail), at = 0;
  const reader = inflate.readable.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (at + r.value.length > out.length) {   // more than one gzip member, or over 4 GB
      const bigger = new Uint8Array(Math.max(2 * out.length, at + r.value.length));
      bigger.set(out.subarray(0, at));
      out = bigger;
    }
    out.set(r.value, at);
    at += r.value.length;
  }
  return new TextDecoder().decode(out.subarray(0, at));
}

/** The recording exactly as `Recording.to_json()` wrote it: each compile's steps and vars
 * arrays of objects also where they came as columns (`columns=True`). */
export async function decode(data) {
  const rec = JSON.parse(await gunzipText(data));
  if (rec && Array.isArray(rec.compiles)) {
    for (const c of rec.compiles) {
      c.steps = stepRows(c.steps);
      c.vars = varRows(c.vars);
      for (const n of c.nodes || []) if (n.module === undefined) n.module = null;   // recorded before modules were
    }
  }
  return rec;
}

/** Readings sent as columns (capture/codec.py, `var_columns`) as the objects the
 * schema's rows are; rows are returned as they are. */
export function varRows(cols) {
  if (Array.isArray(cols) || cols == null) return cols;
  const n = cols.length, out = new Array(n), strings = cols.strings;
  const text = (k) => (k == null ? null : strings[k]);
  const { kind, python_type, source, detail, lazy, realized, node } = cols;
  for (let i = 0; i < n; i++) {
    out[i] = { kind: text(kind[i]), python_type: text(python_type[i]), source: text(source[i]),
      detail: text(detail[i]), lazy: lazy[i], realized: realized[i], node: text(node[i]) };
  }
  return out;
}

/** Steps sent as columns (capture/steps.py, `step_columns`) as the step objects the
 * schema's rows are; rows are returned as they are. Each field is read as its column says
 * (STEP_FIELDS, written from capture's declaration). Values equal from step to step (the
 * locals of a frame, its callers, an empty list) are one shared object: read, never change. */
export function stepRows(cols) {
  if (Array.isArray(cols) || cols == null) return cols;
  const n = cols.length, out = new Array(n);
  const names = STEP_FIELDS.map((f) => f.name), readers = STEP_FIELDS.map((f) => fieldReader(f, cols));
  const k = readers.length;
  for (let i = 0; i < n; i++) {
    const step = {};
    for (let j = 0; j < k; j++) step[names[j]] = readers[j](i);
    out[i] = step;
  }
  return out;
}

/** The reader of one field's column: step i -> its value as the schema's rows hold it. */
function fieldReader(field, cols) {
  const col = cols[field.name];
  if (field.column === "place") return col ? (i) => col[i] : (i) => i;
  if (col == null) {
    if (!("default" in field)) throw new Error(`the steps' columns have no ${field.name}`);
    const value = field.default;
    return () => value;
  }
  if (field.column === "plain") return (i) => col[i];
  if (field.column === "text") {
    const strings = cols.strings;
    return (i) => strings[col[i]];
  }
  if (field.column === "table") {
    const table = cols[field.table];
    return (i) => table[col[i]];
  }
  if (field.column === "sparse") {
    const at = new Map(col), none = [];
    return (i) => at.get(i) || none;
  }
  throw new Error(`step field ${field.name}: unknown column ${field.column}`);
}
