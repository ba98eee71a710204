"""``collect --history-server URL``: application logs from a Spark History Server's REST API.

``HistoryServerClient`` lists applications (paged) and downloads an attempt's logs
(``/api/v1/applications/<id>[/<attempt>]/logs``, a zip) with retries and backoff;
``HistoryServerCollector`` skips attempts whose ``lastUpdated`` it has already stored, so an
interrupted collect resumes where it stopped, and analyses the rest with the engine.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import IO, Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from sparkprof._tree import LocalTree, Root
from sparkprof.analysis import Discovery
from sparkprof.collect.summary import CollectSummary, failed, keep
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore

COLLECTOR = "history-server"
RETRIED_STATUSES = (429, 500, 502, 503, 504)

# What collect reads from a History Server, at most (docs/limits.md): a hostile or broken server
# must not fill the disk or memory. One attempt's logs zip (compressed: real logs of 100 GB of
# events zip to a few GiB) goes to a temporary file; one page of the application list is JSON
# held in memory (a real page of 100 applications is ~100 KiB).
DEFAULT_MAX_DOWNLOAD_BYTES = 4 << 30  # collect --max-download-bytes
DEFAULT_MAX_LISTING_BYTES = 64 << 20


class DownloadLimitError(OSError):
    """A History Server answer larger than collect reads."""

    def __init__(self, url: str, limit: int, what: str) -> None:
        super().__init__(
            f"{url}: {what} more than {_size_text(limit)}, the limit of what collect reads "
            "from a History Server: not read further (raise it with --max-download-bytes)"
        )
        self.url = url
        self.limit = limit


def _size_text(size: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def retrying_session(retries: int, backoff_s: float) -> requests.Session:
    """A session whose GETs are retried on connection errors and 429/5xx answers, with
    exponential backoff from ``backoff_s`` (the History Server and Prometheus clients)."""
    session = requests.Session()
    retry = Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff_s,
        status_forcelist=RETRIED_STATUSES,
        allowed_methods=frozenset({"GET"}),
    )
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _date_param(epoch_ms: int) -> str:
    """The History Server's date parameter format ("2016-11-15T23:22:18.874GMT")."""
    seconds, millis = divmod(epoch_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}GMT"


class HistoryServerClient:
    """The REST API of one History Server."""

    def __init__(
        self,
        base_url: str,
        *,
        retries: int = 5,
        backoff_s: float = 0.5,
        timeout_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        max_download_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES,
        max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_download_bytes = max_download_bytes
        self.max_listing_bytes = max_listing_bytes
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.sleep = sleep
        self.session = retrying_session(retries, backoff_s)

    def _get_json(self, path: str, params: dict[str, Any]) -> Any:
        url = f"{self.base_url}/api/v1/{path}"
        with self.session.get(url, params=params, timeout=self.timeout_s, stream=True) as response:
            response.raise_for_status()
            body = bytearray()
            for chunk in _bounded_chunks(response, url, self.max_listing_bytes, "answered"):
                body += chunk
        try:
            return json.loads(body)
        except ValueError as error:
            raise OSError(f"{url}: not the History Server's JSON: {error}") from error

    def _application_page(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One page of /applications, checked for the fields collect reads: a server that
        answers something else is named, never a traceback."""
        page = self._get_json("applications", params)
        try:
            if not isinstance(page, list):
                raise TypeError(f"a JSON {type(page).__name__}, not a list")
            for app in page:
                if not isinstance(app.get("id"), str) or not isinstance(app["attempts"], list):
                    raise TypeError("an application without an id or attempts")
                _app_end_ms(app)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise OSError(
                f"{self.base_url}/api/v1/applications: not the History Server's application "
                f"list ({error})"
            ) from error
        return page

    def applications(self, *, page_size: int = 100, include_running: bool = False) -> Iterator[Any]:
        """Every application, newest end first, ``page_size`` per request. Completed ones are
        paged by end time (``maxEndDate``, inclusive; ties are asked again and skipped); running
        ones, when wanted, come in one request at the end."""
        end_ms_by_id: dict[str, int] = {}
        cursor_ms: int | None = None
        while True:
            params: dict[str, Any] = {"status": "completed"}
            at_cursor = 0
            if cursor_ms is not None:
                params["maxEndDate"] = _date_param(cursor_ms)
                at_cursor = sum(1 for end_ms in end_ms_by_id.values() if end_ms == cursor_ms)
            params["limit"] = page_size + at_cursor
            page = self._application_page(params)
            fresh = [app for app in page if app["id"] not in end_ms_by_id]
            for app in fresh:
                end_ms_by_id[app["id"]] = _app_end_ms(app)
                yield app
            if not fresh or len(page) < params["limit"]:
                break
            cursor_ms = min(_app_end_ms(app) for app in page)
        if include_running:
            for app in self._application_page({"status": "running"}):
                if app["id"] not in end_ms_by_id:
                    end_ms_by_id[app["id"]] = -1
                    yield app

    def logs_url(self, app_id: str, attempt_id: str | None) -> str:
        path = quote(app_id, safe="")
        if attempt_id:
            path += "/" + quote(attempt_id, safe="")
        return f"{self.base_url}/api/v1/applications/{path}/logs"

    def download_logs(self, app_id: str, attempt_id: str | None, into: IO[bytes]) -> int:
        """Writes the attempt's logs zip into ``into`` (truncated first); retries a failed or cut
        transfer from the start with exponential backoff. Returns the byte count."""
        url = self.logs_url(app_id, attempt_id)
        for attempt in range(self.retries + 1):
            into.seek(0)
            into.truncate()
            try:
                with self.session.get(url, stream=True, timeout=self.timeout_s) as response:
                    response.raise_for_status()
                    written = 0
                    limit = self.max_download_bytes
                    for chunk in _bounded_chunks(response, url, limit, "sent logs of"):
                        into.write(chunk)
                        written += len(chunk)
                into.flush()
                return written
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                if attempt == self.retries:
                    raise
                self.sleep(self.backoff_s * (2**attempt))
        raise AssertionError("not reached")


def _bounded_chunks(
    response: requests.Response, url: str, limit: int, what: str
) -> Iterator[bytes]:
    """The answer's body in chunks, refused as soon as it declares (Content-Length) or sends more
    than ``limit`` bytes: at most ``limit`` bytes are read."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise DownloadLimitError(url, limit, f"{what} {int(declared)} bytes,")
    received = 0
    for chunk in response.iter_content(chunk_size=min(1 << 20, limit + 1)):
        received += len(chunk)
        if received > limit:
            raise DownloadLimitError(url, limit, what)
        yield chunk


def _app_end_ms(app: Any) -> int:
    return max(int(attempt.get("endTimeEpoch", -1)) for attempt in app["attempts"])


class HistoryServerCollector:
    """Collects every application attempt a History Server knows into ``store``."""

    def __init__(
        self,
        store: HistoryStore,
        client: HistoryServerClient,
        *,
        job_keys: JobKeyRule | None = None,
        include_running: bool = False,
        page_size: int = 100,
        limit: int | None = None,
    ) -> None:
        self.store = store
        self.client = client
        self.job_keys = job_keys or JobKeyRule()
        self.include_running = include_running
        self.page_size = page_size
        self.limit = limit

    def collect(self) -> CollectSummary:
        summary = CollectSummary()
        handled = 0
        for app in self.client.applications(
            page_size=self.page_size, include_running=self.include_running
        ):
            for attempt in app["attempts"]:
                summary.found += 1
                attempt_id = attempt.get("attemptId")
                location = self.client.logs_url(app["id"], attempt_id)
                signature = f"{attempt.get('lastUpdatedEpoch')}:{attempt.get('completed')}"
                previous = self.store.collected_log(COLLECTOR, location)
                if previous is not None and previous.signature == signature:
                    summary.unchanged += 1
                    continue
                if self.limit is not None and handled >= self.limit:
                    summary.deferred += 1
                    continue
                handled += 1
                try:
                    self._collect_attempt(app["id"], attempt_id, location, signature, summary)
                except (OSError, requests.RequestException) as error:
                    failed(self.store, summary, COLLECTOR, location, error)
        return summary

    def _collect_attempt(
        self,
        app_id: str,
        attempt_id: str | None,
        location: str,
        signature: str,
        summary: CollectSummary,
    ) -> None:
        # libzip reads a zip by seeking: the download goes to a temporary file, read in place.
        with tempfile.TemporaryDirectory(prefix="sparkprof-hs-") as folder:
            path = os.path.join(folder, "logs.zip")
            with open(path, "wb") as file:
                size = self.client.download_logs(app_id, attempt_id, file)
            root = Root(LocalTree(), path, "logs.zip", location, "file", size, path)
            discovery = Discovery(root, on_read_error="report")
            outcomes = list(discovery.outcomes())
        errors = [outcome.error for outcome in outcomes if outcome.error is not None]
        if errors:
            raise errors[0]
        analysed = [outcome.analysed for outcome in outcomes if outcome.analysed is not None]
        if not analysed:
            keep(self.store, summary, COLLECTOR, location, signature, None, location, self.job_keys)
            return
        for application in analysed:
            keep(
                self.store,
                summary,
                COLLECTOR,
                location,
                signature,
                application,
                location,
                self.job_keys,
            )
