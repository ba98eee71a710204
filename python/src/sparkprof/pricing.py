"""The pricing options of ``sparkprof analyze`` and ``sparkprof whatif`` (docs/cost.md), for
``sparkprof.analyze``, ``sparkprof.whatif`` and the fleet commands. The engine prices the run;
Python only passes the options (checked by the engine with the CLI's ranges and pairings)."""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal


@dataclass(frozen=True)
class CostOptions:
    """Each field is the CLI flag of the same name (``--instance-type`` is ``instance_type``);
    ``None`` (or ``False``) means the flag is not given."""

    prices: str | os.PathLike[str] | None = None  # a sparkprof.prices/v1 catalogue file
    instance_type: str | None = None  # the executors' instance type
    driver_instance_type: str | None = None
    cloud: Literal["aws", "gcp", "azure"] | None = None
    price_per_core_hour: float | None = None  # flat rates: both or neither
    price_per_gib_hour: float | None = None
    spot: bool = False  # the run's executors were on spot / preemptible capacity
    dbu_price: float | None = None  # per Databricks DBU
    dbus_per_instance_hour: float | None = None
    max_slowdown: float | None = None  # right-sizing: the cheapest cluster within this slowdown

    def native(self) -> dict[str, Any]:
        """The options the engine takes (the given ones only)."""
        given = {key: value for key, value in asdict(self).items() if value is not None}
        if "prices" in given:
            given["prices"] = os.fspath(given["prices"])
        return given


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The CLI's cost flags, spelled as ``sparkprof whatif --help`` lists them."""
    group = parser.add_argument_group("cost (docs/cost.md)")
    group.add_argument("--prices", help="price catalogue (sparkprof.prices/v1 JSON)")
    group.add_argument("--instance-type", help="the executors' instance type")
    group.add_argument("--driver-instance-type", help="the driver's instance type")
    group.add_argument("--cloud", choices=["aws", "gcp", "azure"])
    group.add_argument("--price-per-core-hour", type=float, help="flat rate per core-hour")
    group.add_argument("--price-per-gib-hour", type=float, help="flat rate per GiB-hour")
    group.add_argument("--spot", action="store_true", help="executors on spot capacity")
    group.add_argument("--dbu-price", type=float, help="price per Databricks DBU")
    group.add_argument("--dbus-per-instance-hour", type=float, help="DBUs a node bills per hour")
    group.add_argument("--max-slowdown", type=float, help="right-sizing slowdown (default 0.10)")


def from_arguments(arguments: argparse.Namespace) -> CostOptions:
    """The options ``add_arguments`` parsed (argparse names them as the fields)."""
    return CostOptions(**{f.name: getattr(arguments, f.name) for f in fields(CostOptions)})
