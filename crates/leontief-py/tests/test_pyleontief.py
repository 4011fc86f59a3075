"""pyleontief against the command line and on its own: numpy round trips,
parity with `leontief solve` on every paper example and every mechanism,
bad input, the GIL released during solves, dense and sparse outputs."""

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pyleontief as lt

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "datasets" / "paper-examples"
FIG1 = EXAMPLES / "drfh-fig1.json"


def cli() -> str:
    exe = os.environ.get("LEONTIEF_BIN") or shutil.which("leontief")
    if not exe:
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        exe = str(target / "debug" / "leontief")
    assert Path(exe).exists(), f"the leontief binary is not built ({exe}); set LEONTIEF_BIN"
    return exe


def no_times(v):
    """The JSON with every `...seconds` value set to 0 (measured times)."""
    if isinstance(v, dict):
        return {k: (0 if k.endswith("seconds") else no_times(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [no_times(x) for x in v]
    return v


def cli_solve(path, mechanism, flags):
    out = subprocess.run(
        [cli(), "solve", str(path), "--mechanism", mechanism, *flags],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def cases():
    for expected in sorted(EXAMPLES.glob("*.expected.json")):
        e = json.loads(expected.read_text())
        name = expected.name[: -len(".expected.json")]
        if e.get("mechanism") == "enumerate-bbf":
            continue
        yield name, e["mechanism"], e.get("params") or {}


def flags(params):
    out = []
    for k, v in params.items():
        out += [f"--{k.replace('_', '-')}", v if isinstance(v, str) else json.dumps(v)]
    return out


CASES = list(cases())


def test_the_paper_examples_are_all_there():
    assert len(CASES) >= 55


@pytest.mark.parametrize("name,mechanism,params", CASES, ids=[c[0] for c in CASES])
def test_parity_with_the_cli_on_every_paper_example(name, mechanism, params):
    path = EXAMPLES / f"{name}.json"
    sol = lt.solve(path, mechanism, **params)
    assert no_times(sol.to_dict()) == no_times(cli_solve(path, mechanism, flags(params)))
    assert sol.verified, sol.verification


EVERY = [
    ("drf", {}),
    ("drfh", {}),
    ("kdf", {"k": 2}),
    ("naive-drf", {}),
    ("hdrf", {}),
    ("hdrfh", {}),
    ("hdrf-naive", {}),
    ("yarn-fair", {}),
    ("kai", {}),
    ("volcano-proportion", {}),
    ("kueue", {}),
    ("nfc", {}),
    ("psdsf", {"select": "max-tasks"}),
    ("vds", {"alpha": 2}),
    ("tsf", {}),
    ("first-fit", {}),
    ("best-fit", {"normaliser": "mem"}),
    ("slots", {"slots": 4}),
    ("kdf-online", {"k": 2, "on_full": "skip"}),
    ("fds", {"alpha": 2}),
    ("gfj", {"beta": 0.5, "lambda": 3}),
    ("pnorm", {"p": "inf", "alpha": 1}),
    ("bbf-eg", {"method": "dual"}),
    ("bbf-ode", {}),
]


def test_every_mechanism_is_compared():
    assert sorted(m for m, _ in EVERY) == sorted(lt.MECHANISMS)


@pytest.mark.parametrize("mechanism,params", EVERY, ids=[m for m, _ in EVERY])
def test_parity_with_the_cli_for_every_mechanism(mechanism, params):
    sol = lt.solve(FIG1, mechanism, **params)
    assert no_times(sol.to_dict()) == no_times(cli_solve(FIG1, mechanism, flags(params)))
    assert sol.user_tasks.shape == (2,)
    np.testing.assert_allclose(sol.user_tasks, sol.to_dict()["user_tasks"])


def test_queues_as_a_dict():
    # Issue 49's worked case: YARN's per-resource split gives 9 tasks
    # each; hierarchical DRF 100/11.
    inst = {
        "resources": ["cpu", "mem"],
        "servers": [{"name": "s", "capacity": [10, 10]}],
        "queues": [{"name": "A"}, {"name": "B"}],
        "users": [
            {"name": "a", "demand": [1, 0.1], "tasks": 10, "queue": "A"},
            {"name": "b", "demand": [0.1, 1], "tasks": 10, "queue": "B"},
        ],
    }
    sol = lt.solve(inst, "hdrfh")
    assert sol.verified, sol.verification
    np.testing.assert_allclose(sol.user_tasks, [100 / 11, 100 / 11], rtol=1e-9)
    queues = sol.to_dict()["hierarchy"]["queues"]
    assert [q["name"] for q in queues] == ["A", "B"]
    with pytest.raises(ValueError, match=r"users\[1\].queue names unknown queue"):
        lt.solve({**inst, "users": [inst["users"][0], {**inst["users"][1], "queue": "C"}]}, "hdrf")


def test_a_queue_weight_sweep():
    path = EXAMPLES / "hdrf-saturated.json"
    out = lt.sweep(path, "hdrf", "queue_weight:A", [0.5, 1, 2, 4])
    assert list(out["verified"]) == [True] * 4
    a2 = [u[1] for u in out["user_tasks"]]
    assert all(b >= a - 1e-12 for a, b in zip(a2, a2[1:])), a2
    with pytest.raises(ValueError, match="no queue named"):
        lt.sweep(path, "hdrf", "queue_weight:Z", [1])


def test_numpy_in_and_out():
    rng = np.random.default_rng(1)
    n, k, m = 12, 5, 3
    demands = rng.uniform(0.1, 1.0, (n, m))
    capacities = rng.uniform(5.0, 20.0, (k, m))
    eligible = rng.uniform(size=(n, k)) < 0.6
    eligible[:, 0] = True
    weights = rng.uniform(1, 4, n)
    caps = np.full(n, np.inf)
    caps[0] = 0.5
    inst = lt.instance(demands, capacities, weights=weights, tasks=caps, eligible=eligible, counts=[1, 2, 1, 1, 3])
    sol = lt.solve(inst, "drfh")
    assert sol.status == "optimal" and sol.verified
    x = sol.tasks
    assert x.shape == (n, k) and sol.user_tasks.shape == (n,)
    np.testing.assert_allclose(x.sum(axis=1), sol.user_tasks, rtol=1e-12, atol=1e-12)
    assert np.all(x[~eligible] == 0)
    counts = np.array([1, 2, 1, 1, 3])[:, None]
    used = x.T @ demands
    assert np.all(used <= capacities * counts * (1 + 1e-9))
    assert sol.user_tasks[0] <= 0.5 + 1e-9
    # The same instance as a dict of arrays, given straight to solve.
    again = lt.solve({"demands": demands, "capacities": capacities, "weights": weights, "tasks": caps,
                      "eligible": eligible, "counts": [1, 2, 1, 1, 3]}, "drfh")
    np.testing.assert_array_equal(again.user_tasks, sol.user_tasks)


def test_bad_input_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError, match=r"users\[1\]\.demand\[0\]"):
        lt.solve({"demands": [[1, 1], [-1, 1]], "capacities": [[4, 4]]}, "drfh")
    with pytest.raises(ValueError, match="unknown mechanism"):
        lt.solve(FIG1, "nosuch")
    with pytest.raises(ValueError, match="kdf needs k"):
        lt.solve(FIG1, "kdf")
    with pytest.raises(ValueError, match="does not apply"):
        lt.solve(FIG1, "drfh", k=2)
    with pytest.raises(ValueError, match="verify"):
        lt.solve(FIG1, "drfh", verify="sometimes")
    with pytest.raises(ValueError, match="trailing"):
        lt.validate(FIG1.read_text() + " {}")
    with pytest.raises(ValueError):
        lt.instance([[1, 2]], [[1, 2, 3]])
    assert issubclass(lt.LeontiefError, RuntimeError)


def test_solves_release_the_gil():
    inst = lt.generate("heterogeneous", 40, servers=150, resources=3, seed=2)
    done = threading.Event()
    result = {}

    def work():
        try:
            result["sol"] = lt.solve(inst, "drfh")
        finally:
            done.set()

    t = threading.Thread(target=work)
    spins = 0
    t0 = time.perf_counter()
    t.start()
    while not done.is_set() and time.perf_counter() - t0 < 120:
        spins += 1
    t.join()
    elapsed = time.perf_counter() - t0
    assert result["sol"].verified
    # With the GIL held for the whole solve this loop could not run; with it
    # released it spins the whole time (millions of times per second).
    assert elapsed > 0.01 and spins > 1000 * elapsed, (spins, elapsed)


def test_dense_and_sparse_layouts_describe_one_allocation():
    dense = lt.solve(FIG1, "drfh", layout="dense")
    sparse = lt.solve(FIG1, "drfh", layout="sparse", dense=False)
    assert sparse.tasks is None and sparse["layout"] == "sparse"
    coo = sparse["tasks_sparse"]
    assert (coo["users"], coo["servers"]) == dense.tasks.shape
    rebuilt = np.zeros_like(dense.tasks)
    rebuilt[coo["user"], coo["server"]] = coo["tasks"]
    np.testing.assert_array_equal(rebuilt, dense.tasks)
    user, server, tasks = sparse.coo
    np.testing.assert_array_equal(user, coo["user"])
    np.testing.assert_array_equal(server, coo["server"])
    np.testing.assert_array_equal(tasks, coo["tasks"])


def test_sparse_certificates_read_back_as_the_dense_ones():
    inst = lt.generate("placement", 20, servers=200, resources=2, seed=1, eligible=5)
    dense = lt.solve(inst, "drfh", layout="dense")
    sparse = lt.solve(inst, "drfh", layout="sparse")
    rounds = sparse["certificate"]["rounds"]
    assert rounds and all("entries" in r for r in rounds)
    assert sum(len(r["entries"]) for r in rounds) < len(rounds) * 200
    a, b = dense.round_prices, sparse.round_prices
    assert len(a) == len(b) == len(rounds)
    for x, y in zip(a, b):
        assert x.shape == (200, 2)
        np.testing.assert_array_equal(x, y)


def test_exact_pivots_on_and_off_agree_where_highs_is_accurate():
    inst = lt.generate("placement", 20, servers=200, resources=2, seed=1, eligible=5)
    runs = [lt.solve(inst, "drfh", exact_pivots=e) for e in (True, False, None)]
    for r in runs:
        assert r["verification"]["ok"], r["backend_status"]
    assert runs[0]["status"] == "optimal"
    assert "exact" in runs[0]["backend_status"] and "exact" in runs[2]["backend_status"]
    assert "exact" not in runs[1]["backend_status"]
    np.testing.assert_allclose(runs[0].user_tasks, runs[1].user_tasks, rtol=1e-6)


def test_sweep_returns_numpy_columns():
    s = lt.sweep(FIG1, "kdf", "k", [1, 2, 3])
    assert s["value"].tolist() == [1.0, 2.0, 3.0]
    assert s["verified"].all() and s["user_tasks"].shape == (3, 2)
    assert np.all(s["percent_efficiency"] <= 100 + 1e-9)
    pd = pytest.importorskip("pandas")
    df = s.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df["value"]) == [1.0, 2.0, 3.0]


def test_enumerate_bbf_and_generate():
    e = lt.enumerate_bbf(EXAMPLES / "bbf-cyclic4.json")
    assert len(e["solutions"]) == 11
    g = lt.generate("google-cell", 20)
    assert len(g["users"]) == 20 and lt.validate(g)


def test_simulate_a_bundled_config():
    r = lt.simulate(ROOT / "datasets" / "simulations" / "fig4.json", scheduler="best-fit")
    assert r["totals"]["conserved"] is True
    assert r["sample_times"].ndim == 1 and len(r["sample_times"]) > 10
    with pytest.raises(ValueError, match="scheduler"):
        lt.simulate(ROOT / "datasets" / "simulations" / "fig4.json", scheduler="fastest")


def test_simulate_the_starvation_example_task_by_task():
    config = ROOT / "datasets" / "simulations" / "hdrf-starvation.json"
    finished = lambda r: [u["finished"] for u in r["users"]]
    assert finished(lt.simulate(config)) == [100, 0, 140]
    assert finished(lt.simulate(config, scheduler="hdrf-naive-first-fit")) == [196, 0, 4]


def test_the_readme_session_works_as_printed(tmp_path, capsys, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport numpy as np, pyleontief as lt")
    code = readme[start + len("```python\n"): readme.index("```", start + 10)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    # Every printed line matches the comment next to the print.
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    assert [o.strip() for o in out] == expected
    assert (tmp_path / "drfh-vs-bbf.png").stat().st_size > 1000


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors


K8S = ROOT / "datasets" / "kubernetes"


def test_import_and_audit_match_the_cli(tmp_path):
    inst, tasks, summary = lt.import_kubernetes(K8S / "nodes.json", K8S / "pods.json")
    assert summary["users"] == 5 and summary["placed"] == 16
    assert tasks.shape == (5, 3) and tasks.sum() == 16
    subprocess.run(
        [cli(), "import", "kubernetes", str(K8S / "nodes.json"), str(K8S / "pods.json"),
         "--instance", str(tmp_path / "c.json"), "--allocation", str(tmp_path / "p.csv")],
        check=True, capture_output=True,
    )
    assert json.loads((tmp_path / "c.json").read_text()) == inst
    report = lt.audit(inst, tasks, against=["drfh", "psdsf"])
    out = subprocess.run(
        [cli(), "audit", str(tmp_path / "c.json"), str(tmp_path / "p.csv"), "--against", "drfh,psdsf"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert report == json.loads(out)
    assert report.holds["Pareto optimality"] is False
    assert report.holds["feasibility"] is True
    df = report.to_pandas()
    assert df.loc["ml/StatefulSet/trainer", "drfh ratio"] == pytest.approx(2 / 3)


def test_audit_takes_arrays_solutions_dicts_and_csv(tmp_path):
    inst = {"demands": [[0.2, 1], [1, 0.2]], "capacities": [[2, 12], [12, 2]]}
    sol = lt.solve(inst, "drfh")
    reports = [
        lt.audit(inst, sol, against=[]),
        lt.audit(inst, sol.tasks, against=[]),
        lt.audit(inst, sol.to_dict(), against=[]),
    ]
    csv = tmp_path / "a.csv"
    csv.write_text("user,server,tasks\nu1,s1,10\nu2,s2,10\n")
    reports.append(lt.audit(inst, csv, against=[]))
    for r in reports:
        assert all(v is True for v in (r.holds["DRFH max-min"], r.holds["Pareto optimality"])), r["summary"]
    with pytest.raises(ValueError, match="allocation line 2: unknown user"):
        csv.write_text("user,server,tasks\nnobody,s1,1\n")
        lt.audit(inst, csv)
    with pytest.raises(ValueError, match="allocation.tasks has 1 rows"):
        lt.audit(inst, [[1, 2]])
    with pytest.raises(ValueError, match="nosuch"):
        lt.audit(inst, sol, against=["nosuch"])


def test_import_kubernetes_refusals_are_value_errors():
    nodes = {"items": [{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "memory": "8GB"}}}]}
    with pytest.raises(ValueError, match=r"nodes.items\[0\] \(n\).status.allocatable.memory"):
        lt.import_kubernetes(nodes, {"items": []})
    with pytest.raises(ValueError, match="group-by"):
        lt.import_kubernetes(K8S / "nodes.json", K8S / "pods.json", group_by="team")


def test_the_docstring_examples_run():
    import doctest

    failed, tried = doctest.testmod(lt)
    assert tried >= 3 and failed == 0


def test_probe_sp_and_exact_match_the_cli(tmp_path):
    inst = {"demands": [[1, 1], [2, 1]], "capacities": [[10, 10]]}
    p = lt.probe_sp(inst, "nfc", budget=20)
    assert p["manipulable"] and p["users"][1]["truthful"] == 0
    assert not lt.probe_sp(inst, "kdf", k=2, budget=20, inflate_only=True)["manipulable"]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(lt.generate("heterogeneous", 8, servers=6, seed=2)))
    sol = lt.solve(path, "drfh")
    r = lt.audit(path, sol, against=[], exact="")
    assert r["exact"]["ok"] and r["exact"]["proven_rise_bound"] <= 1e-6
    (tmp_path / "s.json").write_text(sol.to_json())
    out = subprocess.run(
        [cli(), "audit", str(path), str(tmp_path / "s.json"), "--against", "", "--exact"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert json.loads(out)["exact"] == r["exact"]
    with pytest.raises(ValueError, match="no max-min certificate"):
        lt.audit(path, lt.solve(path, "psdsf"), against=[], exact="")


def test_import_google_trace(tmp_path):
    (tmp_path / "m.csv").write_text("0,1,0,p,0.5,0.5\n0,2,0,p,1,1\n")
    (tmp_path / "t.csv").write_text(
        "1000000,,7,0,1,1,alice,0,0,0.25,0.25,0,0\n"
        "1000000,,8,0,2,1,bob,0,0,0.25,0.25,0,0\n"
    )
    inst, tasks, summary = lt.import_google_trace(tmp_path / "t.csv", tmp_path / "m.csv", at=60)
    assert [u["name"] for u in inst["users"]] == ["alice", "bob"]
    assert tasks.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert summary["placed"] == 2
    with pytest.raises(ValueError, match="must be a time"):
        lt.import_google_trace(tmp_path / "t.csv", tmp_path / "m.csv", at=-1)


def test_prices_as_numpy():
    fig1 = lt.solve(FIG1, "drfh")
    p = fig1.prices
    assert p.shape == (2, 2) and (p >= 0).all()
    assert len(fig1.round_prices) == 1
    bbf = lt.solve(EXAMPLES / "bbf-cyclic4.json", "bbf-eg")
    d = bbf.to_dict()["bbf"]["prices"]
    inst = json.loads((EXAMPLES / "bbf-cyclic4.json").read_text())
    assert bbf.prices.tolist() == [d[r] for r in inst["resources"]]
    vds = lt.solve(EXAMPLES / "vds-fig1-variant-alpha2.json", "vds", alpha=2)
    assert vds.prices.shape == (2, 3)
    # nfc: the dual certificate of the total. By weak duality the priced
    # capacities bound the total (20 tasks on Fig. 1), with equality.
    nfc = lt.solve(FIG1, "nfc")
    caps = np.asarray([s["capacity"] for s in json.loads(FIG1.read_text())["servers"]])
    assert nfc.prices.shape == caps.shape and (nfc.prices >= 0).all()
    assert nfc.cap_prices.tolist() == [0.0, 0.0]
    assert abs((caps * nfc.prices).sum() - nfc.user_tasks.sum()) < 1e-6
    assert fig1.cap_prices is None


def test_schedulers_beside_the_exact_answer():
    inst = {
        "resources": ["cpu", "mem"],
        "servers": [{"name": "pool", "capacity": [10, 10]}],
        "queues": [{"name": "A"}, {"name": "B"}],
        "users": [
            {"name": "a", "demand": [1, 0.1], "tasks": 10, "queue": "A"},
            {"name": "b", "demand": [0.1, 1], "tasks": 10, "queue": "B"},
        ],
    }
    s = lt.solve(inst, "yarn-fair")
    assert s.verified and list(s["user_tasks"]) == [9.0, 9.0]
    assert s["scheduler"]["queues"][0]["share"] == [9.0, 1.0]
    r = lt.compare_algorithms(inst, ["hdrf", "yarn-fair", "kai", "volcano-proportion", "kueue"])
    assert r["reference"]["mechanism"] == "hdrf"
    assert [a["mechanism"] for a in r["algorithms"]] == ["yarn-fair", "kai", "volcano-proportion", "kueue"]
    assert all(abs(a["fairness_percent"] - 99.0) < 1e-9 for a in r["algorithms"])
    with pytest.raises(ValueError):
        lt.compare_algorithms(inst, ["nosuch"])
    bad = dict(inst, quantum=[1, -1])
    with pytest.raises(ValueError, match=r"quantum\[1\]"):
        lt.solve(bad, "yarn-fair")
