import { describe, expect, it } from "vitest";
import { defaultBaseline, nameSimilarity } from "../src/views/diffBaseline";

const run = (name: string, files: [string, string][], deviceActivity: boolean | null = true) => ({
  name,
  files: files.map(([worker, span]) => ({ worker, span })),
  deviceActivity,
});

describe("defaultBaseline", () => {
  const runs = [
    run("a_run_first_by_name", [["worker0", "1"]], false),
    run("resnet50_num_workers_0", [["worker0", "1"], ["worker0", "2"]]),
    run("resnet50_num_workers_4", [["worker0", "1"], ["worker0", "2"]]),
    run("resnet18_cpu", [["worker0", "1"]], false),
  ];
  it("takes the same run's other span, the one before the experiment's first", () => {
    expect(defaultBaseline({ run: "resnet50_num_workers_4", worker: "worker0", span: "2" }, runs)).toEqual({ run: "resnet50_num_workers_4", worker: "worker0", span: "1" });
    expect(defaultBaseline({ run: "resnet50_num_workers_4", worker: "worker0", span: "1" }, runs)).toEqual({ run: "resnet50_num_workers_4", worker: "worker0", span: "2" });
  });
  it("else the run with the most similar name of the same device kind, same worker and span", () => {
    const one = [run("resnet50_num_workers_0", [["worker0", "1"]]), run("resnet50_num_workers_4", [["worker0", "1"]]), run("a_run_first_by_name", [["worker0", "1"]], false), run("resnet50_num_workers_4_cpu", [["worker0", "1"]], false)];
    expect(defaultBaseline({ run: "resnet50_num_workers_0", worker: "worker0", span: "1" }, one)).toEqual({ run: "resnet50_num_workers_4", worker: "worker0", span: "1" });
    // a CPU experiment: the CPU run, though a GPU run's name is nearer
    expect(defaultBaseline({ run: "a_run_first_by_name", worker: "worker0", span: "1" }, one)).toEqual({ run: "resnet50_num_workers_4_cpu", worker: "worker0", span: "1" });
  });
  it("falls back to another worker of the only run, then the experiment itself", () => {
    expect(defaultBaseline({ run: "ddp", worker: "rank0", span: "1" }, [run("ddp", [["rank0", "1"], ["rank1", "1"]])])).toEqual({ run: "ddp", worker: "rank1", span: "1" });
    expect(defaultBaseline({ run: "solo", worker: "w", span: null }, [run("solo", [["w", "default"]])])).toEqual({ run: "solo", worker: "w", span: "default" });
  });
  it("scores names by shared bigrams", () => {
    expect(nameSimilarity("abc", "abc")).toBe(1);
    expect(nameSimilarity("resnet50_num_workers_0", "resnet50_num_workers_4")).toBeGreaterThan(nameSimilarity("resnet50_num_workers_0", "resnet18_cpu"));
  });
});
