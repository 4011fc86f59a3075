#!/usr/bin/env python3
"""Figs. 6b, 7 and 8 of 000 as numbers, from `leontief simulate` results.

    python3 notebooks/sim_compare.py BEST_FIT.json SLOTS.json

* Fig. 6b: jobs that finished under both runs, grouped by their number of
  tasks; for each group, the mean reduction of the completion time of the
  first run against the second, (slots - best_fit) / slots.
* Fig. 7: per user, the task completion ratio under each run: how many
  users do better under the first, and how many finish all their tasks
  under the first but not under the second.
* Fig. 8 (when the first run was made with --dedicated): how many users
  finish fewer of their tasks in the shared cloud than alone on their
  dedicated clouds.

Only the standard library is needed.
"""
import json
import sys

GROUPS = [(1, 10), (11, 25), (26, 50), (51, 100), (101, 10**9)]


def main(a_path, b_path):
    a = json.load(open(a_path))
    b = json.load(open(b_path))
    name = lambda r: r["scheduler"]["name"] + (
        f" ({r['scheduler']['slots']} slots)" if "slots" in r["scheduler"] else "")
    na, nb = name(a), name(b)
    print(f"runs: A = {na}, B = {nb}")
    print("mean utilisation:", {n: round(100 * u, 1) for n, u in zip(a["resources"], a["mean_utilisation"])},
          "vs", {n: round(100 * u, 1) for n, u in zip(b["resources"], b["mean_utilisation"])})
    jb = {j["id"]: j for j in b["jobs"]}
    print("Fig. 6b: mean completion-time reduction of A against B, jobs finished under both")
    for lo, hi in GROUPS:
        red = [
            (jb[j["id"]]["completion_time"] - j["completion_time"]) / jb[j["id"]]["completion_time"]
            for j in a["jobs"]
            if lo <= j["tasks"] <= hi and j["completion_time"] is not None
            and j["id"] in jb and jb[j["id"]]["completion_time"]
        ]
        label = f"{lo}-{hi}" if hi < 10**9 else f">{lo - 1}"
        if red:
            print(f"  {label:>8} tasks: {len(red):5d} jobs, mean reduction {100 * sum(red) / len(red):6.1f}%")
        else:
            print(f"  {label:>8} tasks: no job finished under both")
    users = [(u, v) for u, v in zip(a["users"], b["users"]) if u["submitted"] > 0]
    better = sum(u["completion_ratio"] > v["completion_ratio"] + 1e-12 for u, v in users)
    worse = sum(u["completion_ratio"] < v["completion_ratio"] - 1e-12 for u, v in users)
    only_a = sum(u["completion_ratio"] == 1.0 and v["completion_ratio"] < 1.0 for u, v in users)
    print(f"Fig. 7: {len(users)} users; higher completion ratio under A: {better} "
          f"({100 * better / len(users):.1f}%), lower: {worse}; all tasks done under A but not B: "
          f"{only_a} ({100 * only_a / len(users):.1f}%)")
    ded = [u for u in a["users"] if u.get("dedicated_completion_ratio") is not None]
    if ded:
        fewer = sum(u["completion_ratio"] < u["dedicated_completion_ratio"] - 1e-12 for u in ded)
        worst = min(u["completion_ratio"] - u["dedicated_completion_ratio"] for u in ded)
        print(f"Fig. 8 (A): {len(ded)} users; fewer tasks finished in the shared cloud than on the "
              f"dedicated one: {fewer} ({100 * fewer / len(ded):.1f}%), largest drop "
              f"{-100 * min(worst, 0):.1f} points")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
