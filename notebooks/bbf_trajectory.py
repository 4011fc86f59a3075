"""Plot a BBF ODE trajectory written by `leontief solve ... --mechanism bbf-ode --trajectory out.csv`.

    leontief solve datasets/paper-examples/dolev-sec43-eg.json --mechanism bbf-ode --trajectory traj.csv
    python3 notebooks/bbf_trajectory.py traj.csv traj.png

Left: each user's x_n against the parameter (log c or t); right: each
resource's slack 1 - load_j on a log scale, which falls like 1/c (like
exp(-t/|J|) by t) for the bottlenecks and levels off for the others.
Needs matplotlib only.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, out):
    with open(path) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], [[float(v) for v in r] for r in rows[1:]]
    param = [r[0] for r in data]
    users = [i for i, h in enumerate(header) if i >= 2 and not h.startswith("slack_")]
    slacks = [i for i, h in enumerate(header) if h.startswith("slack_")]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for i in users:
        a.plot(param, [r[i] for r in data], label=header[i])
    a.set_xlabel(header[0])
    a.set_ylabel("x_n")
    a.set_title("users along the trajectory")
    a.legend(fontsize=7)
    for i in slacks:
        b.semilogy(param, [max(r[i], 1e-16) for r in data], label=header[i][6:])
    b.set_xlabel(header[0])
    b.set_ylabel("1 - load")
    b.set_title("resource slacks")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "trajectory.png")
