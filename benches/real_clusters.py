#!/usr/bin/env python3
"""The "Real clusters" table of benches/REPORT.md: every mechanism on the
Alibaba GPU cluster trace of 2023, listed node by node and merged into its
classes by hand, end to end with verification (one process per solve, wall
time), and in the same run the reference a researcher
would write instead: DRFH's first-round LP on highspy's interior point
(benches/reference/highspy_drfh.py, run when highspy is installed).

    python3 benches/real_clusters.py [--data DIR] [--lists default,gpuspec20,...]
                                     [--mechanisms drfh,tsf,...] [--timeout S]

DIR defaults to $LEONTIEF_DATA or ../shared/data; the leontief binary is
$CARGO_TARGET_DIR/release/leontief (build it first: benches/run.sh does).
Prints markdown tables.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MECHANISMS = {
    "drfh": ["--mechanism", "drfh"],
    "tsf": ["--mechanism", "tsf"],
    "kdf:2": ["--mechanism", "kdf", "--k", "2"],
    "nfc": ["--mechanism", "nfc"],
    "psdsf": ["--mechanism", "psdsf"],
    "vds:2": ["--mechanism", "vds", "--alpha", "2"],
    "first-fit": ["--mechanism", "first-fit"],
    "best-fit": ["--mechanism", "best-fit"],
}


def timed(cmd, timeout):
    """Wall seconds, exit code (or "timeout"), stdout (stderr on failure)."""
    t0 = time.time()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return None, "timeout", ""
        wall = time.time() - t0
        code = p.returncode
    return wall, code, out if code == 0 else err


def merged(instance):
    """The instance with interchangeable servers (equal capacities, every
    placement list holding both or neither) written as one entry with a
    count: what leontief detects by itself, done by hand."""
    lists = [set(u["servers"]) if u.get("servers") is not None else None for u in instance["users"]]
    groups = {}
    for s in instance["servers"]:
        key = (tuple(s["capacity"]), tuple(n for n, l in enumerate(lists) if l is not None and s["name"] in l))
        groups.setdefault(key, []).append(s)
    servers, rename = [], {}
    for j, ((cap, _), members) in enumerate(groups.items()):
        name = f"class{j}"
        servers.append({"name": name, "capacity": list(cap), "count": sum(s.get("count", 1) for s in members)})
        for s in members:
            rename[s["name"]] = name
    users = []
    for u in instance["users"]:
        v = dict(u)
        if u.get("servers") is not None:
            v["servers"] = sorted({rename[x] for x in u["servers"]})
        users.append(v)
    return dict(instance, servers=servers, users=users)


def main():
    ap = argparse.ArgumentParser()
    default_data = os.environ.get("LEONTIEF_DATA", str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--lists", default="default,gpuspec20,multigpu20,gpushare40")
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS))
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()
    trace = Path(a.data) / "alibaba-gpu-v2023"
    if not trace.is_dir():
        sys.exit(f"{trace} is missing (set LEONTIEF_DATA or --data)")
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    leontief = Path(target) / "release" / "leontief"
    python = os.environ.get("PYTHON", sys.executable)
    has_highspy = subprocess.run([python, "-c", "import highspy"], capture_output=True).returncode == 0
    mechanisms = a.mechanisms.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="real-clusters-"))
    print("| task list | shape | users | entries | " + " | ".join(mechanisms) + " | highspy ipm, round 1 |")
    print("|---|---|---|---|" + "---|" * (len(mechanisms) + 1))
    for name in a.lists.split(","):
        listed = tmp / f"{name}.json"
        subprocess.run(
            [leontief, "import", "alibaba-gpu", trace / "openb_node_list_all_node.csv",
             trace / f"openb_pod_list_{name}.csv", "--instance", listed],
            check=True, capture_output=True,
        )
        inst = json.loads(listed.read_text())
        uncapped = dict(inst, users=[{k: v for k, v in u.items() if k != "tasks"} for u in inst["users"]])
        variants = [("listed", inst), ("listed uncapped", uncapped),
                    ("merged", merged(inst)), ("merged uncapped", merged(uncapped))]
        for shape, body in variants:
            path = tmp / f"{name}-{shape.replace(' ', '-')}.json"
            path.write_text(json.dumps(body))
            cells = []
            for m in mechanisms:
                wall, code, out = timed([leontief, "solve", path, *MECHANISMS[m]], a.timeout)
                if code == "timeout":
                    cells.append(f"> {a.timeout:.0f} s")
                    continue
                if code != 0:
                    cells.append(f"exit {code}")
                    continue
                r = json.loads(out)
                ok = (r.get("verification") or {}).get("ok")
                mark = "" if (r["status"] == "optimal" and ok) else f" ({r['status']}, verified {ok})"
                cells.append(f"{wall:.2f} s{mark}")
            ref = ""
            if has_highspy and shape.startswith("listed"):
                wall, code, out = timed(
                    [python, ROOT / "benches/reference/highspy_drfh.py", path, "ipm"], a.timeout)
                ref = f"> {a.timeout:.0f} s" if code == "timeout" else (f"{wall:.2f} s" if code == 0 else f"exit {code}")
            print(f"| {name} | {shape} | {len(body['users'])} | {len(body['servers'])} | "
                  + " | ".join(cells) + f" | {ref} |", flush=True)


if __name__ == "__main__":
    main()
