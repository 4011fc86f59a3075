"""Figs. 13-14 of 002 from `leontief sweep` CSVs: user tasks, percent
fairness and percent efficiency against alpha = beta on the alpha-fair line.

    leontief sweep datasets/paper-examples/joewong-sec5-drf.json --mechanism fds --alpha 0.25..8:50 --csv docs/figures/fig13-fds.csv
    leontief sweep datasets/paper-examples/joewong-sec5-drf.json --mechanism gfj --alpha 0.25..8:50 --csv docs/figures/fig13-gfj.csv
    python3 notebooks/fds_tradeoff.py docs/figures/fig13-fds.csv docs/figures/fig13-gfj.csv docs/figures/fig13-14.png

Needs matplotlib only. The dashed lines are DRF (3, 2): GFJ crosses it at
beta = ln 3 / ln 1.5 = 2.7095.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "optimal"]
    return rows


def main(fds_path, gfj_path, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for path, name, style in [(fds_path, "FDS", "-"), (gfj_path, "GFJ", "--")]:
        rows = load(path)
        beta = [float(r["value"]) for r in rows]
        users = [k for k in rows[0] if k.startswith("tasks_")]
        for u in users:
            a.plot(beta, [float(r[u]) for r in rows], style, label=f"{name} {u[6:]}")
        b.plot(beta, [float(r["percent_fairness"]) for r in rows], style, label=f"{name} fairness")
        b.plot(beta, [float(r["percent_efficiency"]) for r in rows], style, label=f"{name} efficiency")
    for v in (3.0, 2.0):
        a.axhline(v, color="grey", linewidth=0.6, linestyle=":")
    a.axvline(2.7095, color="grey", linewidth=0.6, linestyle=":")
    a.set_xlabel("beta (= alpha)")
    a.set_ylabel("tasks")
    a.set_title("Fig. 13: allocations")
    a.legend(fontsize=7)
    b.axvline(2.7095, color="grey", linewidth=0.6, linestyle=":")
    b.set_xlabel("beta (= alpha)")
    b.set_ylabel("percent")
    b.set_title("Fig. 14: fairness (vs DRF) and efficiency (vs NFC)")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
