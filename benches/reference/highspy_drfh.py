#!/usr/bin/env python3
"""The reference a researcher would write instead of leontief: DRFH's
first-round LP (7) of Wang, Li and Liang, flat (one column per user-server
pair its placement list allows, a cap row per capped user), on highspy with interior point, timed in the same run as leontief's
benches.

    python3 benches/reference/highspy_drfh.py INSTANCE.json [ipm|simplex]

Prints one markdown row: pairs, build seconds, HiGHS seconds, theta*.
Only round 1 (the single LP); leontief's numbers include every round, the
certificate and its check, so this favours the reference. Needs numpy and
highspy (pip install highspy numpy; not a dependency of leontief).
"""

import json
import sys
import time

import highspy
import numpy as np


def main():
    path = sys.argv[1]
    solver = sys.argv[2] if len(sys.argv) > 2 else "ipm"
    inst = json.load(open(path))
    servers, users = inst["servers"], inst["users"]
    m = len(inst["resources"])
    cap = np.array([[s["capacity"][r] * s.get("count", 1) for r in range(m)] for s in servers])
    dem = np.array([u["demand"] for u in users])
    w = np.array([u.get("weight", 1.0) for u in users])
    total = cap.sum(axis=0)
    mu = (dem / np.where(total > 0, total, 1)).max(axis=1)
    n, k = dem.shape[0], cap.shape[0]
    # Placement lists (server names) and task caps, as leontief reads them.
    index_of = {s["name"]: i for i, s in enumerate(servers)}
    allowed = [
        [index_of[x] for x in u["servers"]] if u.get("servers") is not None else range(k)
        for u in users
    ]
    caps = [u.get("tasks") for u in users]
    capped = [u for u in range(n) if caps[u] is not None]
    t0 = time.time()
    # Columns: x_{n,i} for the pairs the lists allow (n-major), then theta.
    # Rows: k*m capacity rows, n level rows mu_n sum_i x_{n,i} - w_n theta
    # >= 0, then a cap row sum_i x_{n,i} <= T_n per capped user.
    cap_row = {u: k * m + n + j for j, u in enumerate(capped)}
    pairs = sum(len(a) for a in allowed)
    ncols = pairs + 1
    starts, index, value = [], [], []
    nz = 0
    for u in range(n):
        rows_r = [r for r in range(m) if dem[u, r] > 0]
        for i in allowed[u]:
            starts.append(nz)
            for r in rows_r:
                index.append(i * m + r)
                value.append(dem[u, r])
                nz += 1
            index.append(k * m + u)
            value.append(mu[u])
            nz += 1
            if u in cap_row:
                index.append(cap_row[u])
                value.append(1.0)
                nz += 1
    starts.append(nz)
    for u in range(n):
        index.append(k * m + u)
        value.append(-w[u])
        nz += 1
    starts.append(nz)
    lp = highspy.HighsLp()
    lp.num_col_ = ncols
    lp.num_row_ = k * m + n + len(capped)
    lp.col_cost_ = np.r_[np.zeros(pairs), 1.0]
    lp.col_lower_ = np.zeros(ncols)
    lp.col_upper_ = np.full(ncols, highspy.kHighsInf)
    lp.row_lower_ = np.r_[np.full(k * m, -highspy.kHighsInf), np.zeros(n), np.full(len(capped), -highspy.kHighsInf)]
    lp.row_upper_ = np.r_[cap.reshape(-1), np.full(n, highspy.kHighsInf), [caps[u] for u in capped]]
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    build = time.time() - t0
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", solver)
    if h.passModel(lp) != highspy.HighsStatus.kOk:
        raise SystemExit("passModel failed")
    t1 = time.time()
    h.run()
    solve = time.time() - t1
    theta = h.getInfo().objective_function_value
    print(f"| highspy {solver} (round 1 only) | {path} | {pairs} | {build:.2f} | {solve:.2f} | {h.modelStatusToString(h.getModelStatus())} | {theta:.9g} |")


if __name__ == "__main__":
    main()
