"""The cost of calling leontief from Python (issue 16: at most 5% over the
Rust solve at 1,000 users x 1,000 servers).

Runs, in one process per shape and alternately, the `maxmin_scale` runner
(leontief::solve in Rust, end to end with verification) and
`pyleontief.solve` on the same generated instance (numpy out: user tasks and
the COO arrays; the JSON text is built as well, since to_dict() needs it).
Usage: python python_overhead.py RUNNER [REPEATS]
"""

import json
import re
import subprocess
import sys
import time

import pyleontief as lt

runner = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
print("| shape | Rust leontief::solve (s) | Python pyleontief.solve (s) | overhead |")
print("|---|---|---|---|")
for m, seed in [(2, 1), (2, 2), (2, 3), (3, 1)]:
    inst = json.dumps(lt.generate("heterogeneous", 1000, servers=1000, resources=m, seed=seed))
    rust, py = [], []
    for _ in range(repeats):
        out = subprocess.run([runner, "drfh", "hetero", "1000", "1000", str(m), str(seed)],
                             capture_output=True, text=True, check=True).stdout
        row = [c.strip() for c in out.strip().splitlines()[-1].split("|")]
        # The runner's row: | mech | shape | pairs | ... | total s | ...
        totals = [float(c) for c in row if re.fullmatch(r"\d+\.\d+", c)]
        rust.append(totals[-1] if len(totals) == 2 else float("nan"))
        t0 = time.perf_counter()
        s = lt.solve(inst, "drfh")
        py.append(time.perf_counter() - t0)
        assert s.verified
    r, p = min(rust), min(py)
    print(f"| 1,000 x 1,000, {m} resources, seed {seed} | {r:.3f} | {p:.3f} | {100 * (p - r) / r:+.1f}% |")
