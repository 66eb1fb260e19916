import { describe, expect, it } from "vitest";
import { formatBandwidth, formatBytes, formatCount, formatDuration, formatPercent, formatValue } from "../src/lib/format";
import { csvField, toCsv, fileSlug } from "../src/lib/csv";

describe("formatDuration (input µs)", () => {
  it("keeps µs below a millisecond", () => {
    expect(formatDuration(0)).toBe("0 µs");
    expect(formatDuration(7)).toBe("7 µs");
    expect(formatDuration(12.345)).toBe("12.3 µs");
    expect(formatDuration(999)).toBe("999 µs");
  });
  it("switches to ms and s", () => {
    expect(formatDuration(1000)).toBe("1 ms");
    expect(formatDuration(1234)).toBe("1.23 ms");
    expect(formatDuration(45_600)).toBe("45.6 ms");
    expect(formatDuration(2_500_000)).toBe("2.5 s");
  });
  it("shows a dash for missing values", () => {
    expect(formatDuration(null)).toBe("–");
    expect(formatDuration(Number.NaN)).toBe("–");
  });
});

describe("formatBytes (binary units)", () => {
  it("formats each unit", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1024)).toBe("1 KiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3 MiB");
    expect(formatBytes(16 * 1024 ** 3)).toBe("16 GiB");
  });
  it("keeps the sign of frees", () => {
    expect(formatBytes(-2048)).toBe("-2 KiB");
  });
});

describe("formatBandwidth (input GB/s)", () => {
  it("keeps small bandwidths readable", () => {
    expect(formatBandwidth(20.1)).toBe("20.1 GB/s");
    expect(formatBandwidth(0.25)).toBe("250 MB/s");
    expect(formatBandwidth(0.0018)).toBe("1.8 MB/s");
    expect(formatBandwidth(0.0000045)).toBe("4.5 KB/s");
    expect(formatBandwidth(0)).toBe("0 GB/s");
    expect(formatBandwidth(null)).toBe("–");
  });
});

describe("other formats", () => {
  it("percent, count, dispatch", () => {
    expect(formatPercent(12.3456)).toBe("12.35 %");
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatValue("text", "<b>x</b>")).toBe("<b>x</b>");
    expect(formatValue("duration", 1500)).toBe("1.5 ms");
    expect(formatValue("bytes", null)).toBe("–");
  });
});

describe("CSV", () => {
  it("quotes commas, quotes and newlines", () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField("x\ny")).toBe('"x\ny"');
    expect(csvField(1.5)).toBe("1.5");
    expect(csvField(null)).toBe("");
  });
  it("defuses spreadsheet formulas but not negative numbers", () => {
    expect(csvField("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvField("-3")).toBe("-3");
  });
  it("builds a document with CRLF lines", () => {
    expect(toCsv(["name", "µs"], [["aten::mm", 12], ["a,b", 3]])).toBe('name,µs\r\naten::mm,12\r\n"a,b",3\r\n');
  });
  it("makes safe file names", () => {
    expect(fileSlug("run/1", "worker 0", null)).toBe("run_1-worker_0");
  });
});
