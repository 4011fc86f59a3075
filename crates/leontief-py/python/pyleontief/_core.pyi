"""Type stubs of the compiled half of pyleontief (see pyleontief/__init__.py)."""

from typing import Optional, Sequence, Tuple

import numpy as np

MECHANISMS: list[str]

class LeontiefError(RuntimeError): ...

def solve(
    instance_json: str,
    mechanism_spec: str,
    verify: str = "auto",
    time_limit: Optional[float] = None,
    layout_name: str = "auto",
    dense_tasks: Optional[bool] = None,
    exact_pivots: Optional[bool] = None,
) -> Tuple[str, np.ndarray, Optional[np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]: ...
def validate(instance_json: str) -> None: ...
def normalise(instance_json: str) -> str: ...
def generate(
    kind: str, users: int, servers: int = 100, resources: int = 2, seed: int = 1, eligible: int = 10
) -> str: ...
def enumerate_bbf(instance_json: str, shard: Tuple[int, int] = (0, 1), dimension: bool = True) -> str: ...
def sweep(
    instance_json: str,
    mechanism_name: str,
    parameter: str,
    values: Sequence[float],
    base: str = "",
    verify: str = "auto",
) -> str: ...
def simulate(
    config_path: str,
    scheduler: Optional[str] = None,
    slots: Optional[int] = None,
    horizon: Optional[float] = None,
    dedicated: bool = False,
) -> str: ...

def audit(
    instance_json: str,
    allocation_text: str,
    csv: bool = False,
    against: str = "auto",
    verify: str = "auto",
    time_limit: Optional[float] = None,
    exact: Optional[str] = None,
) -> str: ...
def probe_sp(
    instance_json: str,
    mechanism_spec: str,
    users: Optional[Sequence[str]] = None,
    budget: int = 40,
    seed: int = 1,
    inflate_only: bool = False,
) -> str: ...
def import_kubernetes(
    nodes_json: str,
    pods_json: str,
    group_by: str = "owner",
    merge: str = "refuse",
    resources: Optional[Sequence[str]] = None,
    uncapped: bool = False,
) -> Tuple[str, np.ndarray, str]: ...
def import_google_trace(
    task_events_path: str,
    machine_events_path: str,
    at: float,
    group_by: str = "user",
    merge: str = "refuse",
    uncapped: bool = False,
) -> Tuple[str, np.ndarray, str]: ...
