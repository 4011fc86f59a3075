"""pyleontief: exact multi-resource fair allocations from Python.

Every mechanism of leontief (DRF, DRFH, k-DF, per-server DRF, NFC, TSF,
FDS/GFJ/alpha-fair/p-norm, BBF, PS-DSF, alphaPF-VDS, the whole-task
heuristics), solved exactly and checked by independent code, with numpy in
and out. (The import name is ``pyleontief`` because PyPI's ``leontief`` is an
unrelated input-output package.)

>>> import numpy as np, pyleontief as lt
>>> sol = lt.solve({"demands": [[0.2, 1], [1, 0.2]],
...                 "capacities": [[2, 12], [12, 2]]}, "drfh")
>>> sol.user_tasks.round(6).tolist(), sol.verified
([10.0, 10.0], True)

An instance is a path to the JSON of docs/instance-format.md, a dict in that
format, or a dict of arrays (see :func:`instance`). Bad input raises
``ValueError`` naming the field or parameter; a solver that could not run
raises :class:`LeontiefError`. The GIL is released while solving, so a thread
pool solves in parallel.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from . import _core
from ._core import MECHANISMS, LeontiefError

__all__ = [
    "solve",
    "Solution",
    "instance",
    "validate",
    "generate",
    "enumerate_bbf",
    "sweep",
    "SweepResult",
    "simulate",
    "audit",
    "AuditReport",
    "compare_algorithms",
    "import_kubernetes",
    "import_google_trace",
    "probe_sp",
    "LeontiefError",
    "MECHANISMS",
]


def _array_instance(spec: Mapping[str, Any]) -> dict:
    d = np.asarray(spec["demands"], dtype=float)
    c = np.asarray(spec["capacities"], dtype=float)
    if d.ndim != 2 or c.ndim != 2:
        raise ValueError("demands must be N x m and capacities K x m (2-D arrays)")
    if d.shape[1] != c.shape[1]:
        raise ValueError(
            f"demands has {d.shape[1]} resources per user but capacities has {c.shape[1]} per server"
        )
    n, m = d.shape
    k = c.shape[0]
    resources = list(spec.get("resources") or [f"r{j + 1}" for j in range(m)])
    users = list(spec.get("users") or [f"u{i + 1}" for i in range(n)])
    servers = list(spec.get("servers") or [f"s{i + 1}" for i in range(k)])
    if len(resources) != m or len(users) != n or len(servers) != k:
        raise ValueError("resources, users and servers must name every column and row")
    raw_users = []
    for i in range(n):
        u: dict = {"name": users[i], "demand": d[i].tolist()}
        raw_users.append(u)
    if spec.get("weights") is not None:
        w = np.asarray(spec["weights"], dtype=float)
        if w.shape != (n,):
            raise ValueError(f"weights must have one entry per user ({n})")
        for i in range(n):
            raw_users[i]["weight"] = float(w[i])
    if spec.get("tasks") is not None:
        t = np.asarray(spec["tasks"], dtype=float)
        if t.shape != (n,):
            raise ValueError(f"tasks must have one entry per user ({n}); use inf for no cap")
        for i in range(n):
            if np.isfinite(t[i]):
                raw_users[i]["tasks"] = float(t[i])
    if spec.get("eligible") is not None:
        e = spec["eligible"]
        if isinstance(e, np.ndarray) or (
            isinstance(e, (list, tuple)) and e and not isinstance(e[0], (list, tuple, np.ndarray))
        ):
            e = np.asarray(e)
        if isinstance(e, np.ndarray) and e.dtype == bool:
            if e.shape != (n, k):
                raise ValueError(f"eligible must be an N x K boolean mask ({n} x {k})")
            lists = [[servers[j] for j in np.flatnonzero(e[i])] for i in range(n)]
        else:
            lists = [[servers[j] if isinstance(j, (int, np.integer)) else j for j in row] for row in e]
            if len(lists) != n:
                raise ValueError(f"eligible must list servers for each of the {n} users")
        for i in range(n):
            raw_users[i]["servers"] = lists[i]
    raw_servers = []
    counts = spec.get("counts")
    for j in range(k):
        s: dict = {"name": servers[j], "capacity": c[j].tolist()}
        if counts is not None:
            s["count"] = int(counts[j])
        raw_servers.append(s)
    return {"resources": resources, "servers": raw_servers, "users": raw_users}


def _instance_json(inst: Any) -> str:
    if isinstance(inst, (str, os.PathLike)):
        text = str(inst)
        if text.lstrip().startswith("{"):
            return text
        with open(inst, encoding="utf-8") as f:
            return f.read()
    if isinstance(inst, Mapping):
        if "demands" in inst:
            return json.dumps(_array_instance(inst))
        return json.dumps(inst)
    raise ValueError(
        "instance: a path, a dict in the instance format, or a dict with demands and capacities arrays"
    )


def instance(
    demands: Any,
    capacities: Any,
    *,
    weights: Any = None,
    tasks: Any = None,
    eligible: Any = None,
    counts: Any = None,
    users: Optional[Sequence[str]] = None,
    servers: Optional[Sequence[str]] = None,
    resources: Optional[Sequence[str]] = None,
) -> dict:
    """An instance dict from arrays.

    ``demands`` is N x m (a task's need of each resource), ``capacities``
    K x m; ``weights`` (N), ``tasks`` (N caps, inf for none), ``eligible`` (an
    N x K boolean mask or per-user lists of server names or indices),
    ``counts`` (K identical servers per row) and names are optional.
    """
    spec = {
        "demands": demands,
        "capacities": capacities,
        "weights": weights,
        "tasks": tasks,
        "eligible": eligible,
        "counts": counts,
        "users": users,
        "servers": servers,
        "resources": resources,
    }
    raw = _array_instance(spec)
    _core.validate(json.dumps(raw))
    return raw


def _spec(mechanism: str, params: Mapping[str, Any]) -> str:
    if ":" in mechanism and params:
        raise ValueError("give parameters in the spec string or as keywords, not both")
    parts = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, float) and np.isinf(value):
            value = "inf"
        elif isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{key}: a number or a name, not a boolean")
        parts.append(f"{key}={value}")
    return mechanism + (":" + ",".join(parts) if parts else "")


class Solution:
    """An answer of :func:`solve`.

    ``user_tasks`` (N) and ``tasks`` (N x K, or None when not dense) are
    numpy arrays; ``coo`` is (user, server, tasks) of the nonzero entries
    (``scipy.sparse.coo_array((tasks, (user, server)), shape)`` takes it); ``status`` is the solver status (``optimal``,
    ``reduced_accuracy``, ``infeasible``, a limit, ``numerical_failure``...);
    ``verified`` says whether the independent check passed, ``verification``
    holds it; ``to_dict()`` is exactly ``leontief solve``'s JSON.
    """

    def __init__(
        self,
        text: str,
        user_tasks: np.ndarray,
        tasks: Optional[np.ndarray],
        coo: tuple,
        instance_text: Optional[str] = None,
    ):
        self._text = text
        self._instance_text = instance_text
        self._dict: Optional[dict] = None
        self.user_tasks = user_tasks
        self.tasks = tasks
        self.coo = coo

    def to_dict(self) -> dict:
        """The allocation JSON of docs/instance-format.md, as a dict."""
        if self._dict is None:
            self._dict = json.loads(self._text)
        return self._dict

    def to_json(self) -> str:
        """The allocation JSON, byte for byte what ``leontief solve`` prints."""
        return self._text

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    @property
    def mechanism(self) -> str:
        return self.to_dict()["mechanism"]

    @property
    def status(self) -> str:
        return self.to_dict()["status"]

    @property
    def objective(self) -> Optional[float]:
        return self.to_dict().get("objective")

    @property
    def levels(self) -> Optional[np.ndarray]:
        v = self.to_dict().get("levels")
        return None if v is None else np.asarray(v, dtype=float)

    @property
    def verification(self) -> Optional[dict]:
        return self.to_dict().get("verification")

    @property
    def verified(self) -> bool:
        v = self.verification
        return bool(v and v.get("ok") is True)

    @property
    def explanation(self) -> list:
        return list(self.to_dict().get("explanation") or [])

    @property
    def metrics(self) -> dict:
        return self.to_dict()["metrics"]

    @property
    def prices(self) -> Optional[Any]:
        """The prices the mechanism's certificate rests on, as numpy:
        per server entry and resource (K x m) for PS-DSF and alphaPF-VDS
        (``gap.server_prices``) and for the max-min mechanisms (the first
        round of ``certificate.rounds``; all rounds: :attr:`round_prices`)
        and for nfc (``total_certificate.prices``; the prices of the users'
        caps: :attr:`cap_prices`); per resource (m) for bbf-eg
        (``bbf.prices``, in the instance's resource order); None when the
        answer carries none."""
        d = self.to_dict()
        eq = (d.get("gap") or {}).get("server_prices")
        if eq is not None:
            return np.asarray(eq, dtype=float)
        bbf = (d.get("bbf") or {}).get("prices")
        if bbf is not None:
            # The JSON holds them by name; the instance gives the order.
            order = json.loads(self._instance_text)["resources"] if self._instance_text else list(bbf)
            return np.asarray([bbf.get(r, 0.0) for r in order], dtype=float)
        total = d.get("total_certificate")
        if total is not None:
            return np.asarray(total["prices"], dtype=float)
        rounds = self.round_prices
        return rounds[0] if rounds else None

    @property
    def cap_prices(self) -> Optional[Any]:
        """nfc: the certificate's price per task of each user's cap (N; 0
        for a user without a cap); None for other mechanisms."""
        total = self.to_dict().get("total_certificate")
        return None if total is None else np.asarray(total["cap_prices"], dtype=float)

    @property
    def round_prices(self) -> list:
        """The max-min certificate's prices per round (K x m arrays; empty
        when there is no certificate)."""
        d = self.to_dict()
        c = d.get("certificate") or {}
        out = []
        for r in c.get("rounds", []):
            if "entries" in r:
                # The sparse layout: rows for the listed entries, 0 elsewhere.
                util = d["metrics"]["server_utilisation"]
                dense = np.zeros((len(util), len(util[0]) if util else 0))
                if r["entries"]:
                    dense[np.asarray(r["entries"], dtype=int)] = np.asarray(r["prices"], dtype=float)
                out.append(dense)
            else:
                out.append(np.asarray(r["prices"], dtype=float))
        return out

    def __repr__(self) -> str:
        return (
            f"Solution(mechanism={self.mechanism!r}, status={self.status!r}, "
            f"verified={self.verified}, user_tasks={np.array2string(self.user_tasks, precision=6)})"
        )


def solve(
    instance: Any,
    mechanism: str,
    *,
    verify: str = "auto",
    time_limit: Optional[float] = None,
    layout: str = "auto",
    dense: Optional[bool] = None,
    exact_pivots: Optional[bool] = None,
    **params: Any,
) -> Solution:
    """Solve ``mechanism`` on ``instance`` and verify the answer.

    ``mechanism`` is a name (``"drfh"``, ``"kdf"``, ``"fds"``, ...; see
    ``MECHANISMS``) with its parameters as keywords (``k=2``, ``alpha=2``,
    ``beta=0.5, lambda_=3``, ``p=np.inf``, ``select="max-tasks"``,
    ``jacobi=0.5``, ``normaliser="mem"``, ``on_full="skip"``...), or a spec
    string (``"kdf:k=2"``). ``verify`` is auto, always or never;
    ``time_limit`` is in seconds per LP / cone program, and bounds the
    whole max-min round sequence and best-response run (max-min rounds
    stopped after a round give that round's feasible point, status
    ``time_limit``: the users frozen so far at their exact levels, the
    rest at least at the last of them); ``layout`` chooses the
    JSON's task layout (auto: sparse from 10^6 pairs); ``dense`` asks for the
    N x K ``tasks`` array (default: below 10^6 user-server pairs; ``coo``
    is always there). ``exact_pivots`` makes every LP of the max-min
    rounds (drfh, kdf, tsf) exact to about 32 digits from HiGHS's basis:
    True, False, or None (default: where the instance has placement
    lists, whose rounds HiGHS's own tolerances cannot decide).
    """
    if "lambda_" in params:
        params["lambda"] = params.pop("lambda_")
    inst = _instance_json(instance)
    text, user_tasks, tasks, coo = _core.solve(
        inst, _spec(mechanism, params), verify, time_limit, layout,
        None if dense is None else bool(dense),
        None if exact_pivots is None else bool(exact_pivots),
    )
    return Solution(text, user_tasks, tasks, coo, inst)


def validate(instance: Any) -> bool:
    """True, or ValueError naming every problem of the instance."""
    _core.validate(_instance_json(instance))
    return True


def generate(kind: str, users: int, *, servers: int = 100, resources: int = 2, seed: int = 1, eligible: int = 10) -> dict:
    """A seeded instance (``google-cell``, ``heterogeneous`` or ``placement``) as a dict."""
    return json.loads(_core.generate(kind, users, servers, resources, seed, eligible))


def enumerate_bbf(instance: Any, *, shard: tuple = (0, 1), dimension: bool = True) -> dict:
    """Every bottleneck-based fair allocation (003 Sec. 6), each re-checked."""
    return json.loads(_core.enumerate_bbf(_instance_json(instance), tuple(shard), dimension))


class SweepResult(dict):
    """The columns of :func:`sweep` (a dict of numpy arrays), with
    :meth:`to_pandas`."""

    def to_pandas(self):
        """A pandas DataFrame, one row per value (needs pandas; user task
        columns are ``tasks_<n>``)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the venv
            raise ImportError("to_pandas needs pandas (pip install pandas)") from e
        cols = {k: v for k, v in self.items() if k not in ("user_tasks", "solutions")}
        for n in range(self["user_tasks"].shape[1]):
            cols[f"tasks_{n}"] = self["user_tasks"][:, n]
        return pd.DataFrame(cols)


def sweep(
    instance: Any,
    mechanism: str,
    parameter: str,
    values: Iterable[float],
    *,
    verify: str = "auto",
    **params: Any,
) -> "SweepResult":
    """``mechanism`` over ``values`` of ``parameter`` (beta, alpha, k, slots,
    or ``queue_weight:QUEUE``, the weight of that queue for hdrf, hdrfh and
    hdrf-naive).

    Returns a dict of numpy columns: ``value``, ``status``, ``verified``,
    ``percent_fairness`` (smallest normalised dominant share over exact
    DRFH's), ``percent_efficiency`` (total tasks over NFC's), ``total_tasks``
    and ``user_tasks`` (points x N); ``solutions`` holds each point's dict.
    """
    if "lambda_" in params:
        params["lambda"] = params.pop("lambda_")
    base = _spec("", params).lstrip(":")
    out = json.loads(
        _core.sweep(_instance_json(instance), mechanism, parameter, [float(v) for v in values], base, verify)
    )
    fair, eff = out["fairness_reference"], out["efficiency_reference"]
    cols: dict = {k: [] for k in ("value", "status", "verified", "percent_fairness", "percent_efficiency", "total_tasks", "user_tasks")}
    sols = []
    for p in out["points"]:
        s = p.get("solution")
        sols.append(s)
        cols["value"].append(p["value"])
        if s is None:
            cols["status"].append("refused")
            cols["verified"].append(False)
            for k in ("percent_fairness", "percent_efficiency", "total_tasks"):
                cols[k].append(np.nan)
            cols["user_tasks"].append(None)
            continue
        m = s["metrics"]
        cols["status"].append(s["status"])
        cols["verified"].append(bool((s.get("verification") or {}).get("ok")))
        cols["percent_fairness"].append(100.0 * min(m["normalised_shares"], default=0.0) / fair)
        cols["percent_efficiency"].append(100.0 * m["total_tasks"] / eff)
        cols["total_tasks"].append(m["total_tasks"])
        cols["user_tasks"].append(s["user_tasks"])
    n = max((len(u) for u in cols["user_tasks"] if u is not None), default=0)
    cols["user_tasks"] = np.array([u if u is not None else [np.nan] * n for u in cols["user_tasks"]], dtype=float)
    for k in ("value", "percent_fairness", "percent_efficiency", "total_tasks"):
        cols[k] = np.asarray(cols[k], dtype=float)
    cols["verified"] = np.asarray(cols["verified"], dtype=bool)
    cols["status"] = np.asarray(cols["status"], dtype=object)
    cols["solutions"] = sols
    return SweepResult(cols)


def simulate(
    config: Any,
    *,
    scheduler: Optional[str] = None,
    slots: Optional[int] = None,
    horizon: Optional[float] = None,
    dedicated: bool = False,
) -> dict:
    """The trace-driven simulation of a config file (000 Sec. VI; the format
    is in ``leontief simulate --help``), with the scheduler (first-fit,
    best-fit, slots, drfh), slots, horizon and dedicated clouds overridden
    if given. Returns the result dict ``leontief simulate`` writes, with
    ``sample_times`` and the per-resource ``utilisation`` as numpy arrays."""
    r = json.loads(_core.simulate(os.fspath(config), scheduler, slots, horizon, dedicated))
    if "sample_times" in r:
        r["sample_times"] = np.asarray(r["sample_times"], dtype=float)
    return r


class AuditReport(dict):
    """What :func:`audit` found: the JSON of ``leontief audit`` as a dict
    (``summary``, one entry per property, ``users``, ``against``), with
    :attr:`holds` and :meth:`to_pandas`."""

    @property
    def holds(self) -> dict:
        """Property name -> True, False, or None (not checked / not
        applicable)."""
        return {v["property"]: v["holds"] for v in self["summary"]}

    def to_pandas(self):
        """One row per user: tasks, shares, equal split, and per mechanism
        its tasks and the ratio (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the venv
            raise ImportError("to_pandas needs pandas (pip install pandas)") from e
        df = pd.DataFrame(self["users"]).set_index("user")
        for c in self["against"]:
            m = c["mechanism"]
            df[m] = [u["mechanism_tasks"] for u in c["users"]]
            df[f"{m} ratio"] = [np.nan if u["ratio"] is None else u["ratio"] for u in c["users"]]
        return df


def _allocation_text(allocation: Any) -> tuple:
    """(text, is_csv) of an allocation given as a path (.csv or .json), a
    Solution, a dict in the allocation format, or an N x K array of tasks."""
    if isinstance(allocation, Solution):
        return allocation.to_json(), False
    if isinstance(allocation, (str, os.PathLike)):
        text = str(allocation)
        if text.lstrip().startswith("{"):
            return text, False
        with open(allocation, encoding="utf-8") as f:
            return f.read(), text.lower().endswith(".csv")
    if isinstance(allocation, Mapping):
        return json.dumps(allocation), False
    tasks = np.asarray(allocation, dtype=float)
    if tasks.ndim != 2:
        raise ValueError(
            "allocation: a path (.json or .csv), a Solution, a dict in the allocation format, or an N x K array of tasks"
        )
    return json.dumps({"tasks": tasks.tolist()}), False


def audit(
    instance: Any,
    allocation: Any,
    *,
    against: Iterable[str] | str = "auto",
    verify: str = "auto",
    time_limit: Optional[float] = None,
    exact: Optional[str] = None,
) -> AuditReport:
    """Audit an allocation made elsewhere (a scheduler's snapshot, a
    heuristic, a paper's table): feasibility, whole tasks, sharing
    incentive, envy-freeness, Pareto optimality, DRFH max-min, BBF condition
    (2), PS-DSF Definition 4, each with a witness where it fails, and the
    distance to each mechanism of ``against`` (spec strings; "auto": drfh,
    and nfc up to 10^6 user-server pairs, a note saying so above; "none":
    no comparison). ``exact``
    ("" for the shares the allocation names, or "drfh", "kdf:k=2", "tsf")
    re-checks the allocation's max-min certificate in exact arithmetic
    (``report["exact"]``); the allocation must then be a solve's JSON or a
    Solution.

    >>> import pyleontief as lt
    >>> inst = {"demands": [[0.2, 1], [1, 0.2]], "capacities": [[2, 12], [12, 2]]}
    >>> r = lt.audit(inst, [[10, 0], [0, 4]], against=["drfh"])
    >>> r.holds["Pareto optimality"], r["against"][0]["lost_most"][0]["user"]
    (False, 'u2')
    """
    text, csv = _allocation_text(allocation)
    if not isinstance(against, str):
        against = ",".join(against)
    return AuditReport(
        json.loads(_core.audit(_instance_json(instance), text, csv, against, verify, time_limit, exact))
    )


def compare_algorithms(
    instance: Any,
    against: Iterable[str] | str,
    *,
    verify: str = "auto",
    time_limit: Optional[float] = None,
) -> dict:
    """The production schedulers' share algorithms beside the exact
    hierarchical answer on ``instance`` (queues as a dict in the instance
    format): per queue each mechanism's share, tasks and dominant share
    against the reference (the first of "hdrf" or "hdrfh" in ``against``,
    default "hdrf"), percent fairness and efficiency, the queues that lose
    most and why, and sharing incentive (guarantees), envy-freeness and
    Pareto optimality with witnesses (docs/schedulers.md).

    >>> import pyleontief as lt
    >>> inst = {"resources": ["cpu", "mem"], "servers": [{"name": "pool", "capacity": [10, 10]}],
    ...         "queues": [{"name": "A"}, {"name": "B"}],
    ...         "users": [{"name": "a", "demand": [1, 0.1], "tasks": 10, "queue": "A"},
    ...                   {"name": "b", "demand": [0.1, 1], "tasks": 10, "queue": "B"}]}
    >>> r = lt.compare_algorithms(inst, ["hdrf", "yarn-fair"])
    >>> round(r["algorithms"][0]["fairness_percent"], 6), r["algorithms"][0]["queues"][0]["share"]
    (99.0, [9.0, 1.0])
    """
    if not isinstance(against, str):
        against = ",".join(against)
    return json.loads(_core.compare_algorithms(_instance_json(instance), against, verify, time_limit))


def import_kubernetes(
    nodes: Any,
    pods: Any,
    *,
    group_by: str = "owner",
    merge: str = "refuse",
    resources: Optional[Sequence[str]] = None,
    uncapped: bool = False,
) -> tuple:
    """A Kubernetes snapshot (``kubectl get nodes -o json``, ``kubectl get
    pods -A -o json``: paths, JSON text or dicts) as (instance dict, tasks
    N x K array of pods per node, summary dict); the rules are those of
    ``leontief import kubernetes`` (docs/audit.md)."""

    def text(v: Any) -> str:
        if isinstance(v, Mapping):
            return json.dumps(v)
        s = str(v)
        if s.lstrip().startswith("{"):
            return s
        with open(v, encoding="utf-8") as f:
            return f.read()

    inst, tasks, summary = _core.import_kubernetes(
        text(nodes), text(pods), group_by, merge, None if resources is None else list(resources), uncapped
    )
    return json.loads(inst), tasks, json.loads(summary)


def probe_sp(
    instance: Any,
    mechanism: str,
    *,
    users: Optional[Sequence[str]] = None,
    budget: int = 40,
    seed: int = 1,
    inflate_only: bool = False,
    **params: Any,
) -> dict:
    """Search misreported demand vectors for each user (or ``users``) and
    report the largest gain in its true tasks under ``mechanism``, with the
    misreport as witness (``leontief audit --probe-sp``; docs/audit.md).

    >>> import pyleontief as lt
    >>> inst = {"demands": [[1, 1], [2, 1]], "capacities": [[10, 10]]}
    >>> lt.probe_sp(inst, "nfc")["manipulable"], lt.probe_sp(inst, "drf")["manipulable"]
    (True, False)
    """
    return json.loads(
        _core.probe_sp(
            _instance_json(instance),
            _spec(mechanism, params),
            None if users is None else list(users),
            budget,
            seed,
            inflate_only,
        )
    )


def import_google_trace(
    task_events: Any,
    machine_events: Any,
    at: float,
    *,
    group_by: str = "user",
    merge: str = "refuse",
    uncapped: bool = False,
) -> tuple:
    """A Google cluster-data 2011 snapshot at ``at`` seconds (paths of the
    ``task_events`` and ``machine_events`` CSVs) as (instance dict, tasks
    N x K array of tasks per machine, summary dict); the rules are those of
    ``leontief import google-trace`` (docs/audit.md)."""
    inst, tasks, summary = _core.import_google_trace(
        os.fspath(task_events), os.fspath(machine_events), float(at), group_by, merge, uncapped
    )
    return json.loads(inst), tasks, json.loads(summary)
