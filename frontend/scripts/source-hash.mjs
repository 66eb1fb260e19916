// SHA-256 over the frontend's sources (the files that determine the bundle), so a machine without Node
// can still tell whether the committed bundle was built from the committed sources.
// Usage: node scripts/source-hash.mjs            print the hash
//        node scripts/source-hash.mjs --write DIR write DIR/source-hash.txt
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const TOP = ["package.json", "package-lock.json", "index.html", "vite.config.ts", "tsconfig.json"];
const DIRS = ["src", "public"];

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

const files = [...TOP.map((f) => join(root, f)), ...DIRS.flatMap((d) => walk(join(root, d)))]
  .map((p) => relative(root, p).split("\\").join("/"))
  .sort();
const h = createHash("sha256");
for (const f of files) {
  h.update(`${f}\0`);
  h.update(readFileSync(join(root, f)));
  h.update("\0");
}
const digest = h.digest("hex");
const i = process.argv.indexOf("--write");
if (i >= 0) writeFileSync(join(process.argv[i + 1] ?? "", "source-hash.txt"), `${digest}\n`);
else process.stdout.write(`${digest}\n`);
