"""sparkprof: why is my Spark job slow, and what do I change.

The C++ engine (the one behind the ``sparkprof`` CLI and the Spark plugin) for Python:

    import sparkprof
    report = sparkprof.analyze("s3://bucket/spark-events/app-123.zstd")
    for finding in report.application.findings:
        print(finding.severity, finding.title)
    report.json  # byte for byte what `sparkprof analyze ... --format json` writes
    sparkprof.whatif(path, {"spark.executor.instances": 8}, fixes=["skew"]).prediction

See docs/python.md.
"""

from sparkprof._tree import ChunkStream
from sparkprof.analysis import (
    AnalysedApplication,
    DiscoveryWarning,
    InputProblem,
    NothingAnalysableError,
    Report,
    analyze,
    iter_applications,
)
from sparkprof.pricing import CostOptions
from sparkprof.report import REPORT_SCHEMA, ApplicationReport, Finding, Stage, parse_report_json
from sparkprof.what_if import WHATIF_SCHEMA, WhatifPrediction, WhatifReport, whatif

__version__ = "0.1.0"

__all__ = [
    "REPORT_SCHEMA",
    "WHATIF_SCHEMA",
    "AnalysedApplication",
    "ApplicationReport",
    "ChunkStream",
    "CostOptions",
    "DiscoveryWarning",
    "Finding",
    "InputProblem",
    "NothingAnalysableError",
    "Report",
    "Stage",
    "WhatifPrediction",
    "WhatifReport",
    "__version__",
    "analyze",
    "iter_applications",
    "parse_report_json",
    "whatif",
]
