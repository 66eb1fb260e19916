// The API client against a real HTTP server (node:http) answering like the plugin does.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api, ApiError, buildUrl } from "../src/api/client";

let server: Server;
let base = "";
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/data/plugin/pytorch_profiler/runs") {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ runs: [{ name: "r1", loading: false }] }));
    } else if (url.pathname === "/data/plugin/pytorch_profiler/workers") {
      res.statusCode = 400;
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ error: "missing query parameter 'run'", status: 400 }));
    } else if (url.pathname === "/data/plugin/pytorch_profiler/echo") {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(Object.fromEntries(url.searchParams)));
    } else if (url.pathname === "/data/plugin/pytorch_profiler/broken") {
      res.end("{not json");
    } else {
      res.statusCode = 404;
      res.end("not found");
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data/plugin/pytorch_profiler/`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

describe("buildUrl", () => {
  it("resolves relative to the app and drops empty params", () => {
    expect(buildUrl("http://h/data/plugin/p/", "views", { run: "a b&c", span: null, worker: "" })).toBe(
      "http://h/data/plugin/p/views?run=a+b%26c",
    );
    expect(buildUrl("http://h/data/plugin/p/", "/operation/table", { group_by: "name" })).toBe(
      "http://h/data/plugin/p/operation/table?group_by=name",
    );
  });
});

describe("Api", () => {
  it("decodes JSON answers", async () => {
    const api = new Api(base);
    expect(await api.get("runs")).toEqual({ runs: [{ name: "r1", loading: false }] });
  });
  it("passes parameters, encoded", async () => {
    const api = new Api(base);
    expect(await api.get("echo", { run: "run/α <x>", n: 3 })).toEqual({ run: "run/α <x>", n: "3" });
  });
  it("turns an error answer into an ApiError with the server's message", async () => {
    const api = new Api(base);
    const err = await api.get("workers").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toBe("missing query parameter 'run'");
  });
  it("reports a non-JSON error body as text and invalid JSON as an error", async () => {
    const api = new Api(base);
    await expect(api.get("nope")).rejects.toMatchObject({ status: 404, message: "not found" });
    await expect(api.get("broken")).rejects.toThrow(/invalid JSON/);
  });
  it("answers repeated requests from its cache until cleared", async () => {
    const api = new Api(base);
    const before = hits.filter((h) => h.includes("echo?k=cache")).length;
    await api.cached("echo", { k: "cache" });
    await api.cached("echo", { k: "cache" });
    expect(hits.filter((h) => h.includes("echo?k=cache")).length - before).toBe(1);
    api.clearCache();
    await api.cached("echo", { k: "cache" });
    expect(hits.filter((h) => h.includes("echo?k=cache")).length - before).toBe(2);
  });
});
