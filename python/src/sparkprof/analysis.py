"""``sparkprof.analyze``: event logs anywhere (a path, any fsspec URL, an open file, byte chunks)
through the native engine, with the report as typed objects and as the CLI's exact JSON."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Union, cast

from sparkprof import _native
from sparkprof._tree import BinaryStream, ChunkStream, Root, fsspec_root, local_root, stream_root
from sparkprof.executor_logs import fetch_logs
from sparkprof.pricing import CostOptions
from sparkprof.report import ApplicationReport
from sparkprof.whatif_prediction import Settings, WhatifPrediction, predict

Source = Union[str, "os.PathLike[str]", BinaryStream, Iterable[bytes]]
ReadErrorPolicy = Literal["raise", "report"]


class NothingAnalysableError(Exception):
    """No Spark event could be read from the source (the CLI's exit code 2)."""

    def __init__(self, message: str, warnings: list[DiscoveryWarning], skipped: list[str]) -> None:
        super().__init__(message)
        self.warnings = warnings
        self.skipped = skipped


@dataclass(frozen=True)
class DiscoveryWarning:
    """A folder or file the search passed over (what the CLI prints as ``sparkprof: PATH: ...``)."""

    path: str
    message: str


@dataclass(frozen=True)
class InputProblem:
    """A located problem in one application's input (file, line, byte offset in ``message``)."""

    application: str  # the log's name: file, rolling directory or Databricks folder
    message: str
    per_line: bool  # a bad line (there may be many) rather than a problem with a whole file


@dataclass(frozen=True)
class AnalysedApplication:
    """One application as the engine analysed it: its report, and the native result that renders
    it in the other formats."""

    report: ApplicationReport
    problems: list[InputProblem]
    problems_not_kept: int
    spark_properties: dict[str, str]
    resource_profiles: list[dict[str, Any]]
    native: _native.Analysis = field(repr=False, compare=False)

    def render(self, format: str = "text") -> str:
        """``text``, ``md``, ``json`` or ``html``, exactly as ``sparkprof analyze`` writes it."""
        return self.native.render(format)

    def whatif(self, settings: Settings = (), fixes: Iterable[str] = ()) -> WhatifPrediction:
        """This run replayed as it was and with ``settings`` / ``fixes`` (see sparkprof.whatif);
        the log is not read again."""
        return predict(self.native, settings, fixes)


@dataclass(frozen=True)
class Report:
    """The result of ``analyze``: every analysable application found in the source."""

    applications: list[AnalysedApplication]
    warnings: list[DiscoveryWarning]
    skipped: list[str]  # logs in which no Spark event could be read
    # The same logs as the engine read them (the report's not_analysed list: where, and why).
    unread: list[_native.Analysis] = field(default_factory=list, repr=False, compare=False)

    @property
    def application(self) -> ApplicationReport:
        """The report when the source held exactly one application."""
        if len(self.applications) != 1:
            raise ValueError(f"the source holds {len(self.applications)} applications")
        return self.applications[0].report

    @property
    def reports(self) -> list[ApplicationReport]:
        return [application.report for application in self.applications]

    @property
    def problems(self) -> list[InputProblem]:
        return [problem for application in self.applications for problem in application.problems]

    @property
    def not_analysed(self) -> list[DiscoveryWarning]:
        """The logs of ``skipped`` with why (the report's ``not_analysed`` list; path: the log's
        file, or the folder holding its parts)."""
        return [DiscoveryWarning(*native.not_analysed) for native in self.unread]

    @property
    def json(self) -> str:
        """Byte for byte what ``sparkprof analyze SOURCE --format json`` writes."""
        return self.render("json")

    def render(self, format: str = "text") -> str:
        """``text``, ``md``, ``json`` or ``html``, exactly as ``sparkprof analyze`` writes it."""
        natives = [application.native for application in self.applications]
        return _native.render(natives, format, self.unread)

    def any_finding_at_or_above(self, severity: Literal["warning", "critical"]) -> bool:
        """What ``sparkprof analyze --fail-on SEVERITY`` tests (exit code 3)."""
        natives = [application.native for application in self.applications]
        return _native.any_finding_at_or_above(natives, severity)


def resolve(source: Source, name: str | None = None, **storage_options: Any) -> Root:
    """Where discovery starts for ``source``."""
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if "://" in text or "::" in text:
            if text.startswith("file://") and "::" not in text:
                return local_root(text[len("file://") :])
            return fsspec_root(text, storage_options)
        return local_root(text)
    if hasattr(source, "read"):
        display = name or str(getattr(source, "name", "") or "<stream>")
        return stream_root(cast(BinaryStream, source), display)
    if isinstance(source, Iterable):
        return stream_root(ChunkStream(source), name or "<stream>")
    raise TypeError(f"cannot analyse a {type(source).__name__}: pass a path, URL, file or chunks")


def discover(root: Root) -> _native.Discovery:
    return _native.discover(
        root.tree,
        root.path,
        root.name,
        root.display_name,
        root.kind,
        root.size_bytes,
        root.local_path,
    )


@dataclass(frozen=True)
class FoundLog:
    """An application log discovery found, before it is read."""

    index: int
    name: str
    layout: str
    parts: list[tuple[str, int]]  # (display name, size in bytes) in reading order


class Discovery:
    """The applications found under a root, analysed on demand (the collectors analyse only the
    new or grown ones)."""

    def __init__(
        self,
        root: Root,
        on_read_error: ReadErrorPolicy = "raise",
        max_problems_kept: int = 1000,
        right_sizing: bool = True,
        cost: CostOptions | None = None,
        profile: str | os.PathLike[str] | None = None,
        logs: str | os.PathLike[str] | None = None,
    ) -> None:
        """``right_sizing=False`` leaves out the cost section's instance frontier (each of its
        points is a simulation; a what-if does not need them); ``cost`` prices the runs as the
        CLI's cost flags do; ``profile`` is ``sparkprof analyze --profile``."""
        if on_read_error not in ("raise", "report"):
            raise ValueError("on_read_error must be 'raise' or 'report'")
        self.on_read_error = on_read_error
        self.max_problems_kept = max_problems_kept
        self.right_sizing = right_sizing
        self.cost = (cost or CostOptions()).native()
        self.profile = os.fspath(profile) if profile is not None else ""
        self.process_logs = os.fspath(logs) if logs is not None else ""
        self.native = discover(root)
        if on_read_error == "raise":
            _raise_first(self.native.errors)
        self.warnings = [DiscoveryWarning(path, message) for path, message in self.native.warnings]
        self.logs = [
            FoundLog(index, found["name"], found["layout"], [tuple(p) for p in found["parts"]])
            for index, found in enumerate(self.native.applications)
        ]
        self.unread: list[_native.Analysis] = []  # logs in which no Spark event could be read

    @property
    def skipped(self) -> list[str]:
        """The names of the logs in which no Spark event could be read, in the order met."""
        return [native.log_name for native in self.unread]

    def analyse(
        self, indices: Iterable[int] | None = None, workers: int = 1
    ) -> Iterator[tuple[int, AnalysedApplication | None]]:
        """(index, analysed application or None when no event could be read), in index order,
        at most ``workers`` analyses in memory at once. With ``on_read_error="raise"`` the first
        storage exception of an application is raised when its turn comes."""
        for outcome in self.outcomes(indices, workers):
            if outcome.error is not None and self.on_read_error == "raise":
                raise outcome.error
            yield outcome.index, outcome.analysed

    def outcomes(self, indices: Iterable[int] | None = None, workers: int = 1) -> Iterator[Outcome]:
        """Like ``analyse``, but never raises a storage exception: it comes with its outcome."""
        wanted = list(range(len(self.logs)) if indices is None else indices)
        if workers <= 1:
            for index in wanted:
                yield self._outcome(index, self._analyze(index))
            return
        with ThreadPoolExecutor(max_workers=workers) as pool:

            def submit(index: int) -> tuple[int, Future[_native.Analysis]]:
                return index, pool.submit(self._analyze, index)

            pending = [submit(index) for index in wanted[:workers]]
            upcoming = iter(wanted[workers:])
            while pending:
                index, future = pending.pop(0)
                native = future.result()
                following = next(upcoming, None)
                if following is not None:
                    pending.append(submit(following))
                yield self._outcome(index, native)

    def _analyze(self, index: int) -> _native.Analysis:
        return self.native.analyze(
            index,
            self.max_problems_kept,
            self.right_sizing,
            self.cost,
            self.profile,
            self.process_logs,
        )

    def _outcome(self, index: int, native: _native.Analysis) -> Outcome:
        errors = native.errors
        error = errors[0] if errors else None
        if not native.analysable:
            self.unread.append(native)
            return Outcome(index, None, error)
        analysed = AnalysedApplication(
            report=ApplicationReport.from_json(native.render("json")),
            problems=[
                InputProblem(native.log_name, message, per_line)
                for message, per_line in native.problems
            ],
            problems_not_kept=native.problems_not_kept,
            spark_properties=dict(native.spark_properties),
            resource_profiles=native.resource_profiles,
            native=native,
        )
        return Outcome(index, analysed, error)


@dataclass(frozen=True)
class Outcome:
    index: int
    analysed: AnalysedApplication | None  # None: no Spark event could be read
    error: BaseException | None  # the first exception the storage raised while reading


def iter_applications(
    source: Source,
    *,
    name: str | None = None,
    on_read_error: ReadErrorPolicy = "raise",
    max_problems_kept: int = 1000,
    workers: int = 1,
    cost: CostOptions | None = None,
    profile: str | os.PathLike[str] | None = None,
    **storage_options: Any,
) -> Iterator[AnalysedApplication]:
    """Analyses the applications in ``source`` one at a time, in the CLI's order, holding at most
    ``workers`` of them in memory. Logs without any readable Spark event are skipped.

    ``workers > 1`` analyses that many applications at once on threads (the engine runs without
    the GIL), for folders of many logs. ``cost``, ``profile``: as for ``analyze`` (a directory
    ``profile`` holds each application's profile under its id)."""
    root = resolve(source, name, **storage_options)
    discovery = Discovery(root, on_read_error, max_problems_kept, cost=cost, profile=profile)
    for _, analysed in discovery.analyse(workers=workers):
        if analysed is not None:
            yield analysed


def analyze(
    source: Source,
    *,
    name: str | None = None,
    on_read_error: ReadErrorPolicy = "raise",
    max_problems_kept: int = 1000,
    workers: int = 1,
    cost: CostOptions | None = None,
    profile: str | os.PathLike[str] | None = None,
    logs: str | os.PathLike[str] | None = None,
    **storage_options: Any,
) -> Report:
    """Reads the event logs in ``source`` through the native engine and returns the report.

    ``source``: a local path (file, rolling ``eventlog_v2_*`` directory, zip, folder of many
    applications), any fsspec URL (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``, ``http(s)://``,
    ``memory://``, chained ``zip::s3://...``), an open binary file object, or an iterable of byte
    chunks. Bytes stream into the engine as it reads them: no temporary copy, memory bounded by
    the engine's buffers (a zip that is not a local file is the exception: zip needs seeking, so
    it is held in memory, up to 2 GiB).

    ``storage_options`` go to fsspec (``anon=True``, ``key=...``, ``client_kwargs=...``).
    ``name`` names a file object or chunk source in the report (default: the file's ``name``).
    ``on_read_error``: ``"raise"`` (default) re-raises the first exception the storage raised while
    listing or reading (a network error is not a corrupt log); ``"report"`` keeps it as a located
    input problem, as the CLI does, and analyses what was read.
    ``cost``: the pricing options of ``sparkprof analyze`` (``sparkprof.CostOptions``:
    instance types, a price catalogue, flat rates, spot, DBUs; docs/cost.md).
    ``profile``: the agent's samples, as ``sparkprof analyze --profile``: a local ``*.sparkprof``
    file, or the Spark plugin's output directory (``spark.sparkprof.outputDir``, where each
    application's profile is found by its id). The report then carries ``profile`` sections and
    the profile rules' findings; a profile that cannot be used is said in ``profile.reason``.
    ``logs``: the executors' and the driver's own logs, as ``sparkprof analyze --logs``: a local
    directory or file, or an fsspec URL (its log files are copied to a temporary directory
    first, bounded as ``sparkprof.executor_logs.fetch_logs`` says). The report then carries
    ``logs`` and the kill causes read them.

    Raises ``NothingAnalysableError`` when no Spark event could be read at all.
    """
    root = resolve(source, name, **storage_options)
    with fetch_logs(logs, **storage_options) as local_logs:
        discovery = Discovery(
            root, on_read_error, max_problems_kept, cost=cost, profile=profile, logs=local_logs
        )
        analysed = [found for _, found in discovery.analyse(workers=workers) if found is not None]
    if not analysed:
        raise NothingAnalysableError(
            nothing_message(source, name, discovery.skipped), discovery.warnings, discovery.skipped
        )
    return Report(analysed, discovery.warnings, discovery.skipped, discovery.unread)


def nothing_message(source: Source, name: str | None, skipped: list[str]) -> str:
    label = name or (os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<stream>")
    if skipped:
        return f"no Spark events could be read from {label} ({', '.join(skipped)})"
    return f"no event logs found under {label}"


def _raise_first(errors: list[BaseException]) -> None:
    if errors:
        raise errors[0]
