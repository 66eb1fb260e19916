"""Print the facts about the sample traces that samples/README.md records (stdlib only).

python samples/inspect_samples.py [logdir]
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path


def load(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def describe(path: Path, root: Path) -> None:
    trace = load(path)
    events = trace["traceEvents"]
    kinds = Counter((e.get("ph"), e.get("cat")) for e in events)
    steps = [e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#")]
    memory = [e for e in events if e.get("name") == "[memory]"]
    modules = [e for e in events if "Python module id" in e.get("args", {})]
    collectives = Counter(
        (e["cat"], e["name"])
        for e in events
        if e.get("ph") == "X" and e["name"].startswith(("gloo:", "c10d::", "record_param_comms"))
    )
    with_coll_name = sum(1 for e in events if "Collective name" in e.get("args", {}))
    peak = max((m["args"]["Total Allocated"] for m in memory), default=None)

    print(f"{path.relative_to(root)} ({path.stat().st_size} B, {len(events)} events)")
    print("  " + ", ".join(f"{ph}/{cat}:{n}" for (ph, cat), n in sorted(kinds.items(), key=str)))
    print(f"  steps={steps} memory={len(memory)} peak_alloc={peak} module_events={len(modules)}")
    print(f"  collectives={dict(collectives)} 'Collective name' args={with_coll_name}")
    if trace.get("Framework") == "pytorch-lightning":
        names = [e.get("name", "") for e in events]
        mods = sum(n.startswith("[pl][module]") for n in names)
        hooks = sum(n.startswith("[pl][profile]") for n in names)
        print(f"  Framework=pytorch-lightning [pl][module]={mods} [pl][profile]={hooks}")
    if "distributedInfo" in trace:
        print(f"  distributedInfo={trace['distributedInfo']}")


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    for path in sorted(root.rglob("*.pt.trace.json*")):
        describe(path, root)


if __name__ == "__main__":
    main()
