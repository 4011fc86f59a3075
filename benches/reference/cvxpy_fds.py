"""The CVXPY + Clarabel reference for issue 3's speed target.

    pip install cvxpy clarabel          # not needed by leontief itself
    python3 benches/reference/cvxpy_fds.py N M BETA LAMBDA [--write inst.json]

Builds the random single-pool instance of benches/REPORT.md (N users, M
resources, demands U[0.1, 1], capacities N/10, Python's random with seed 11;
--write saves it for `leontief solve`), states FDS at (BETA, LAMBDA) as
mechanisms.md writes it (the alpha-fair line: sum of powers; region A:
theta log U + (1-theta) log S; region B: y <= log s, z >= log-sum-exp of
(1-beta) y, b <= log S, minimise z/beta + kappa b) and times
`prob.solve(solver=cp.CLARABEL)` end to end (canonicalisation included).
Shares are multiplied by N so a typical one is about 1 (the maximiser does
not change; unscaled, Clarabel fails more often). Prints one line: seconds
and CVXPY's status, or FAILED.
"""
import json
import random
import sys
import time

import cvxpy as cp
import numpy as np

n, m, beta, lam = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
random.seed(11)
inst = {
    "resources": [f"r{j}" for j in range(m)],
    "servers": [{"name": "pool", "capacity": [n / 10] * m}],
    "users": [{"name": f"u{i}", "demand": [random.uniform(0.1, 1) for _ in range(m)]} for i in range(n)],
}
if "--write" in sys.argv:
    json.dump(inst, open(sys.argv[sys.argv.index("--write") + 1], "w"))
D = np.array([u["demand"] for u in inst["users"]])
C = np.array(inst["servers"][0]["capacity"])
om = (D / C).max(axis=1) * n  # FDS: dominant share per task, times N

t0 = time.time()
x = cp.Variable(n, nonneg=True)
s = cp.multiply(om, x)
cons = [D.T @ x <= C]
kappa = lam - (1 - beta) / beta
if abs(kappa) < 1e-12:  # the alpha-fair line
    obj = cp.Maximize(cp.sum(cp.power(s, 1 - beta)) / (1 - beta))
elif beta < 1:  # region A
    theta = 1 / (beta * (1 + lam))
    obj = cp.Maximize(theta * cp.log(cp.sum(cp.power(s, 1 - beta))) + (1 - theta) * cp.log(cp.sum(s)))
else:  # region B
    y, z, b = cp.Variable(n), cp.Variable(), cp.Variable()
    cons += [y <= cp.log(s), z >= cp.log_sum_exp((1 - beta) * y), b <= cp.log(cp.sum(s))]
    obj = cp.Minimize(z / beta + kappa * b)
prob = cp.Problem(obj, cons)
try:
    prob.solve(solver=cp.CLARABEL)
    print(f"N={n} m={m} ({beta}, {lam}): {time.time() - t0:.3f} s, status {prob.status}")
except cp.error.SolverError as e:
    print(f"N={n} m={m} ({beta}, {lam}): {time.time() - t0:.3f} s, FAILED ({e})")
